/**
 * The simulator's HTTP plumbing (index.ts decides the answers): reading and parsing request
 * bodies, writing answers after the configured latency, holding hung requests until close, and
 * the loopback server itself.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { errorBody } from "./errors.ts";

const MAX_BODY_BYTES = 1_000_000;

export interface Answer {
  status: number;
  text: string;
  headers?: Record<string, string>;
}

export type Body =
  | { kind: "none" }
  | { kind: "json"; value: unknown }
  | { kind: "invalid"; text: string };

export function errorAnswer(status: number, message?: string): Answer {
  return { status, text: JSON.stringify(errorBody(status, message)) };
}

export async function readBody(req: IncomingMessage): Promise<{ text: string; tooLarge: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) tooLarge = true;
    else chunks.push(buffer);
  }
  return { text: tooLarge ? "" : Buffer.concat(chunks).toString("utf8"), tooLarge };
}

export function parseBody(text: string): Body {
  if (text.trim() === "") return { kind: "none" };
  try {
    return { kind: "json", value: JSON.parse(text) as unknown };
  } catch {
    return { kind: "invalid", text };
  }
}

export function queryRecord(params: URLSearchParams): Record<string, string> {
  const record: Record<string, string> = {};
  for (const key of new Set(params.keys())) record[key] = params.getAll(key).join(",");
  return record;
}

export function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Writes answers and hangs requests; `endAll` ends the hung ones and the pending delays. */
export interface Answering {
  respond(res: ServerResponse, answer: Answer): Promise<void>;
  hang(res: ServerResponse): void;
  endAll(): void;
}

/** Answers after `latencyMs()` (the fault configuration's at the time of answering). */
export function answering(latencyMs: () => number): Answering {
  const hung = new Set<ServerResponse>();
  const pendingDelays = new Set<() => void>();

  const delay = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        pendingDelays.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      pendingDelays.add(done);
    });

  const respond = async (res: ServerResponse, answer: Answer) => {
    if (latencyMs() > 0) await delay(latencyMs());
    if (res.destroyed || res.headersSent) return;
    res.writeHead(answer.status, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(answer.text),
      ...answer.headers,
    });
    res.end(answer.text);
  };

  const hang = (res: ServerResponse) => {
    hung.add(res);
    res.on("close", () => hung.delete(res));
  };

  const endAll = () => {
    for (const res of hung) res.destroy();
    hung.clear();
    for (const done of [...pendingDelays]) done();
  };

  return { respond, hang, endAll };
}

/** The server on `host:port` (0: ephemeral), listening, and its base URL (no trailing slash). */
export async function listen(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  host: string,
  port: number,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      // The last line of defence: nothing a client sends may take the server down.
      if (!res.destroyed && !res.headersSent) {
        const answer = errorAnswer(500);
        res.writeHead(500, { "content-type": "application/json; charset=utf-8" });
        res.end(answer.text);
      }
    });
  });
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port: bound } = server.address() as AddressInfo;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${bound}`;
  return { server, url };
}
