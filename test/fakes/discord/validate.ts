/**
 * The checks Discord makes on message, autocomplete and command payloads, answered the way
 * Discord answers them: 400 with code 50035 "Invalid Form Body" and an `errors` tree. The fake
 * refuses what Discord would refuse, so a renderer that breaks a limit fails its tests.
 */

export interface FieldError {
  path: (string | number)[];
  code: string;
  message: string;
}

export interface DiscordErrorBody {
  code: number;
  message: string;
  errors?: unknown;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const maxLength = (path: FieldError["path"], max: number): FieldError => ({
  path,
  code: "BASE_TYPE_MAX_LENGTH",
  message: `Must be ${max} or fewer in length.`,
});

const badLength = (path: FieldError["path"], min: number, max: number): FieldError => ({
  path,
  code: "BASE_TYPE_BAD_LENGTH",
  message: `Must be between ${min} and ${max} in length.`,
});

const required = (path: FieldError["path"]): FieldError => ({
  path,
  code: "BASE_TYPE_REQUIRED",
  message: "This field is required",
});

function checkString(
  errors: FieldError[],
  path: FieldError["path"],
  value: unknown,
  min: number,
  max: number,
): void {
  if (value === undefined || value === null) {
    if (min > 0) errors.push(required(path));
    return;
  }
  if (typeof value !== "string") {
    errors.push({ path, code: "BASE_TYPE_STRING", message: "Must be a string." });
    return;
  }
  if (value.length < min) errors.push(badLength(path, min, max));
  else if (value.length > max) errors.push(maxLength(path, max));
}

function checkUrl(
  errors: FieldError[],
  path: FieldError["path"],
  value: unknown,
  allowAttachment: boolean,
): void {
  if (typeof value !== "string") {
    errors.push(required(path));
    return;
  }
  if (allowAttachment && value.startsWith("attachment://")) return;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    errors.push({ path, code: "URL_TYPE_INVALID_URL", message: "Not a well formed URL." });
    return;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    errors.push({
      path,
      code: "URL_TYPE_INVALID_SCHEME",
      message: `Scheme "${url.protocol.replace(/:$/, "")}" is not supported. Scheme must be one of ('http', 'https').`,
    });
  }
}

export function embedSize(embed: Json): number {
  const len = (value: unknown) => (typeof value === "string" ? value.length : 0);
  const fields = Array.isArray(embed.fields) ? embed.fields : [];
  return (
    len(embed.title) +
    len(embed.description) +
    (isObject(embed.footer) ? len(embed.footer.text) : 0) +
    (isObject(embed.author) ? len(embed.author.name) : 0) +
    fields.reduce<number>(
      (sum, field) => sum + (isObject(field) ? len(field.name) + len(field.value) : 0),
      0,
    )
  );
}

function checkEmbed(errors: FieldError[], embed: unknown, index: number): void {
  const at = (...rest: (string | number)[]) => ["embeds", index, ...rest];
  if (!isObject(embed)) {
    errors.push({
      path: at(),
      code: "MODEL_TYPE_CONVERT",
      message: "Only dictionaries may be used",
    });
    return;
  }
  checkString(errors, at("title"), embed.title, 0, 256);
  checkString(errors, at("description"), embed.description, 0, 4096);
  if (embed.url !== undefined) checkUrl(errors, at("url"), embed.url, false);
  if (embed.color !== undefined) {
    const color = embed.color;
    if (typeof color !== "number" || !Number.isInteger(color) || color < 0 || color > 0xffffff) {
      errors.push({
        path: at("color"),
        code: "NUMBER_TYPE_MAX",
        message: "int value out of range",
      });
    }
  }
  for (const key of ["image", "thumbnail"] as const) {
    const media = embed[key];
    if (media !== undefined) {
      if (!isObject(media)) errors.push(required(at(key)));
      else checkUrl(errors, at(key, "url"), media.url, true);
    }
  }
  if (embed.footer !== undefined) {
    if (!isObject(embed.footer)) errors.push(required(at("footer")));
    else checkString(errors, at("footer", "text"), embed.footer.text, 1, 2048);
  }
  if (embed.author !== undefined) {
    if (!isObject(embed.author)) errors.push(required(at("author")));
    else checkString(errors, at("author", "name"), embed.author.name, 1, 256);
  }
  if (embed.fields !== undefined) {
    if (!Array.isArray(embed.fields)) {
      errors.push({ path: at("fields"), code: "LIST_TYPE_CONVERT", message: "Must be an array." });
    } else {
      if (embed.fields.length > 25) errors.push(maxLength(at("fields"), 25));
      embed.fields.forEach((field: unknown, i: number) => {
        if (!isObject(field)) {
          errors.push(required(at("fields", i)));
          return;
        }
        checkString(errors, at("fields", i, "name"), field.name, 1, 256);
        checkString(errors, at("fields", i, "value"), field.value, 1, 1024);
      });
    }
  }
}

function checkComponents(errors: FieldError[], components: unknown): void {
  if (!Array.isArray(components)) {
    errors.push({ path: ["components"], code: "LIST_TYPE_CONVERT", message: "Must be an array." });
    return;
  }
  if (components.length > 5) errors.push(maxLength(["components"], 5));
  const customIds = new Set<string>();
  components.forEach((row: unknown, r: number) => {
    if (!isObject(row) || row.type !== 1 || !Array.isArray(row.components)) {
      errors.push({
        path: ["components", r],
        code: "UNION_TYPE_CHOICES",
        message: 'Value of field "type" must be one of (1,).',
      });
      return;
    }
    if (row.components.length < 1 || row.components.length > 5) {
      errors.push(badLength(["components", r, "components"], 1, 5));
    }
    row.components.forEach((child: unknown, c: number) => {
      const at = (...rest: (string | number)[]) => ["components", r, "components", c, ...rest];
      if (!isObject(child) || child.type !== 2) {
        // Only buttons are checked in depth: the bot sends no other component.
        return;
      }
      const style = child.style;
      if (typeof style !== "number" || style < 1 || style > 6) {
        errors.push({ path: at("style"), code: "ENUM_TYPE_COERCE", message: "Not a valid enum." });
      }
      checkString(errors, at("label"), child.label, 0, 80);
      if (style === 5) {
        checkUrl(errors, at("url"), child.url, false);
        if (child.custom_id !== undefined) {
          errors.push({
            path: at("custom_id"),
            code: "BUTTON_COMPONENT_CUSTOM_ID_URL_MUTUALLY_EXCLUSIVE",
            message: "A custom id and url cannot both be specified",
          });
        }
        return;
      }
      if (style === 6) return;
      checkString(errors, at("custom_id"), child.custom_id, 1, 100);
      if (typeof child.custom_id === "string") {
        if (customIds.has(child.custom_id)) {
          errors.push({
            path: at("custom_id"),
            code: "COMPONENT_CUSTOM_ID_DUPLICATED",
            message: "Component custom id cannot be duplicated",
          });
        }
        customIds.add(child.custom_id);
      }
      if (child.label === undefined && child.emoji === undefined) {
        errors.push({
          path: at(),
          code: "BUTTON_COMPONENT_LABEL_OR_EMOJI_REQUIRED",
          message: "A label or emoji is required",
        });
      }
    });
  });
}

/** Checks a message create/edit body; `fileCount` is the number of uploaded file parts. */
export function validateMessage(body: Json, fileCount: number): FieldError[] {
  const errors: FieldError[] = [];
  checkString(errors, ["content"], body.content, 0, 2000);
  if (body.embeds !== undefined && body.embeds !== null) {
    if (!Array.isArray(body.embeds)) {
      errors.push({ path: ["embeds"], code: "LIST_TYPE_CONVERT", message: "Must be an array." });
    } else {
      if (body.embeds.length > 10) errors.push(maxLength(["embeds"], 10));
      body.embeds.forEach((embed: unknown, i: number) => {
        checkEmbed(errors, embed, i);
      });
      const total = body.embeds.reduce<number>(
        (sum, embed) => sum + (isObject(embed) ? embedSize(embed) : 0),
        0,
      );
      if (total > 6000) {
        errors.push({
          path: ["embeds"],
          code: "MAX_EMBED_SIZE_EXCEEDED",
          message: "Embed size exceeds maximum size of 6000",
        });
      }
    }
  }
  if (body.components !== undefined && body.components !== null) {
    checkComponents(errors, body.components);
  }
  if (fileCount > 10) errors.push(maxLength(["files"], 10));
  return errors;
}

/** Whether a new message would be empty: Discord answers 50006 to that. */
export function isEmptyMessage(body: Json, fileCount: number): boolean {
  const nonEmpty = (value: unknown) => Array.isArray(value) && value.length > 0;
  return (
    (typeof body.content !== "string" || body.content.length === 0) &&
    !nonEmpty(body.embeds) &&
    !nonEmpty(body.components) &&
    !nonEmpty(body.sticker_ids) &&
    body.poll === undefined &&
    fileCount === 0
  );
}

export function validateAutocomplete(data: unknown): FieldError[] {
  const errors: FieldError[] = [];
  if (!isObject(data) || !Array.isArray(data.choices)) {
    errors.push(required(["data", "choices"]));
    return errors;
  }
  if (data.choices.length > 25) errors.push(maxLength(["data", "choices"], 25));
  data.choices.forEach((choice: unknown, i: number) => {
    const at = (...rest: (string | number)[]) => ["data", "choices", i, ...rest];
    if (!isObject(choice)) {
      errors.push(required(at()));
      return;
    }
    checkString(errors, at("name"), choice.name, 1, 100);
    if (typeof choice.value === "string") checkString(errors, at("value"), choice.value, 0, 100);
    else if (typeof choice.value !== "number") errors.push(required(at("value")));
  });
  return errors;
}

const COMMAND_NAME = /^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;

function checkOptions(errors: FieldError[], path: FieldError["path"], options: unknown): void {
  if (options === undefined) return;
  if (!Array.isArray(options)) {
    errors.push({ path, code: "LIST_TYPE_CONVERT", message: "Must be an array." });
    return;
  }
  if (options.length > 25) errors.push(maxLength(path, 25));
  let sawOptional = false;
  const names = new Set<string>();
  options.forEach((option: unknown, i: number) => {
    const at = (...rest: (string | number)[]) => [...path, i, ...rest];
    if (!isObject(option)) {
      errors.push(required(at()));
      return;
    }
    checkName(errors, at("name"), option.name);
    if (typeof option.name === "string") {
      if (names.has(option.name)) {
        errors.push({
          path: at("name"),
          code: "APPLICATION_COMMAND_OPTIONS_NAME_ALREADY_EXISTS",
          message: "Option names must be unique",
        });
      }
      names.add(option.name);
    }
    checkString(errors, at("description"), option.description, 1, 100);
    if (typeof option.type !== "number" || option.type < 1 || option.type > 11) {
      errors.push({ path: at("type"), code: "ENUM_TYPE_COERCE", message: "Not a valid enum." });
    }
    if (option.required === true && sawOptional) {
      errors.push({
        path: at("required"),
        code: "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
        message: "Required options must be placed before non-required options",
      });
    }
    if (option.required !== true) sawOptional = true;
    if (option.choices !== undefined) {
      if (!Array.isArray(option.choices)) errors.push(required(at("choices")));
      else {
        if (option.choices.length > 25) errors.push(maxLength(at("choices"), 25));
        if (option.autocomplete === true && option.choices.length > 0) {
          errors.push({
            path: at("autocomplete"),
            code: "APPLICATION_COMMAND_AUTOCOMPLETE_INVALID",
            message: "Autocomplete cannot be set for options with choices",
          });
        }
      }
    }
    if (option.type === 1 || option.type === 2) checkOptions(errors, at("options"), option.options);
  });
}

function checkName(errors: FieldError[], path: FieldError["path"], name: unknown): void {
  if (typeof name !== "string" || !COMMAND_NAME.test(name) || name !== name.toLowerCase()) {
    errors.push({
      path,
      code: "APPLICATION_COMMAND_INVALID_NAME",
      message: `Command name is invalid: ${JSON.stringify(name)}`,
    });
  }
}

/** Checks a bulk-overwrite body (an array of chat-input, user or message commands). */
export function validateCommands(body: unknown): FieldError[] {
  const errors: FieldError[] = [];
  if (!Array.isArray(body)) {
    errors.push({ path: [], code: "LIST_TYPE_CONVERT", message: "Must be an array." });
    return errors;
  }
  const names = new Set<string>();
  body.forEach((command: unknown, i: number) => {
    if (!isObject(command)) {
      errors.push(required([i]));
      return;
    }
    const type = command.type ?? 1;
    if (type === 1) {
      checkName(errors, [i, "name"], command.name);
      checkString(errors, [i, "description"], command.description, 1, 100);
    } else {
      checkString(errors, [i, "name"], command.name, 1, 32);
    }
    const key = `${String(type)}:${String(command.name)}`;
    if (names.has(key)) {
      errors.push({
        path: [i, "name"],
        code: "APPLICATION_COMMANDS_DUPLICATE_NAME",
        message: `Application command names must be unique: ${String(command.name)}`,
      });
    }
    names.add(key);
    checkOptions(errors, [i, "options"], command.options);
  });
  if (body.length > 100) errors.push(maxLength([], 100));
  return errors;
}

/** Builds Discord's nested `errors` object from flat field errors. */
export function invalidFormBody(errors: FieldError[]): DiscordErrorBody {
  const tree: Json = {};
  for (const error of errors) {
    let node = tree;
    for (const key of error.path) {
      const name = String(key);
      const next = node[name];
      if (isObject(next)) node = next;
      else {
        const created: Json = {};
        node[name] = created;
        node = created;
      }
    }
    const list = Array.isArray(node._errors) ? node._errors : [];
    list.push({ code: error.code, message: error.message });
    node._errors = list;
  }
  return { code: 50035, message: "Invalid Form Body", errors: tree };
}
