import type { RecordedRequest } from "./index.ts";

/** What a recorded interaction callback, edit, follow-up or message carries, as far as tests read. */
export type DiscordBody = {
  type?: number;
  flags?: number;
  content?: string;
  embeds?: {
    title?: string;
    description?: string;
    fields?: { name: string; value: string }[];
    footer?: { text: string };
  }[];
};

/** The words a recorded Discord request shows a person: content, then each embed's parts. */
export function discordText(request: RecordedRequest): string {
  const body = request.body as DiscordBody & { data?: DiscordBody };
  const data = body.data ?? body;
  const embeds = (data.embeds ?? []).map((e) =>
    [
      e.title ?? "",
      e.description ?? "",
      ...(e.fields ?? []).map((f) => `${f.name}\n${f.value}`),
      e.footer?.text ?? "",
    ].join("\n"),
  );
  return [data.content ?? "", ...embeds].join("\n");
}
