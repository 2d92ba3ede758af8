import type { IncomingMessage } from "node:http";

/** A file that arrived in a multipart upload. */
export interface UploadedFile {
  /** The multipart field name (grammY uses a random id and refers to it as `attach://<id>`). */
  field: string;
  filename: string;
  contentType: string;
  data: Buffer;
}

export interface RequestBody {
  /** Plain parameters. JSON bodies keep their types; form and query fields arrive as strings. */
  fields: Record<string, unknown>;
  files: UploadedFile[];
}

export class BodyError extends Error {}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** `a=1; b="two"; c=three` -> { a: "1", b: "two", c: "three" }, tolerant of missing spaces and quotes. */
function headerParams(value: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const piece of value.split(";").slice(1)) {
    const eq = piece.indexOf("=");
    if (eq === -1) continue;
    const key = piece.slice(0, eq).trim().toLowerCase();
    let val = piece.slice(eq + 1).trim();
    if (val.startsWith('"') && val.endsWith('"') && val.length >= 2) val = val.slice(1, -1);
    params[key] = val;
  }
  return params;
}

/**
 * multipart/form-data as grammY writes it: `content-disposition:form-data;name="x";filename=y`
 * (no space after the colon, the filename unquoted), CRLF line ends.
 */
export function parseMultipart(body: Buffer, boundary: string): RequestBody {
  const fields: Record<string, unknown> = {};
  const files: UploadedFile[] = [];
  const delimiter = Buffer.from(`--${boundary}`);
  const nextDelimiter = Buffer.from(`\r\n--${boundary}`);
  let pos = body.indexOf(delimiter);
  if (pos === -1) throw new BodyError("multipart body without its boundary");
  pos += delimiter.length;
  while (pos < body.length) {
    if (body.subarray(pos, pos + 2).toString() === "--") break;
    if (body.subarray(pos, pos + 2).toString() === "\r\n") pos += 2;
    const end = body.indexOf(nextDelimiter, pos);
    if (end === -1) throw new BodyError("multipart part without a closing boundary");
    const part = body.subarray(pos, end);
    const headerEnd = part.indexOf("\r\n\r\n");
    if (headerEnd === -1) throw new BodyError("multipart part without headers");
    const headers: Record<string, string> = {};
    for (const line of part.subarray(0, headerEnd).toString("utf8").split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon > 0)
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const data = part.subarray(headerEnd + 4);
    const disposition = headerParams(headers["content-disposition"] ?? "");
    const name = disposition.name;
    if (name === undefined) throw new BodyError("multipart part without a name");
    if (disposition.filename !== undefined) {
      files.push({
        field: name,
        filename: disposition.filename,
        contentType: headers["content-type"] ?? "application/octet-stream",
        data: Buffer.from(data),
      });
    } else {
      fields[name] = data.toString("utf8");
    }
    pos = end + nextDelimiter.length;
  }
  return { fields, files };
}

/** Reads a Bot API request: query string, JSON, urlencoded or multipart, merged. */
export async function readRequestBody(req: IncomingMessage, url: URL): Promise<RequestBody> {
  const fields: Record<string, unknown> = Object.fromEntries(url.searchParams);
  const raw = await readAll(req);
  const type = (req.headers["content-type"] ?? "").toLowerCase();
  if (raw.length === 0) return { fields, files: [] };
  if (type.startsWith("application/json")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString("utf8"));
    } catch {
      throw new BodyError("can't parse JSON object");
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new BodyError("the JSON body must be an object");
    }
    return { fields: { ...fields, ...parsed }, files: [] };
  }
  if (type.startsWith("multipart/form-data")) {
    const boundary = headerParams(req.headers["content-type"] ?? "").boundary;
    if (!boundary) throw new BodyError("multipart body without a boundary parameter");
    const parsed = parseMultipart(raw, boundary);
    return { fields: { ...fields, ...parsed.fields }, files: parsed.files };
  }
  if (type.startsWith("application/x-www-form-urlencoded")) {
    const form = Object.fromEntries(new URLSearchParams(raw.toString("utf8")));
    return { fields: { ...fields, ...form }, files: [] };
  }
  throw new BodyError(`unsupported content type "${type}"`);
}
