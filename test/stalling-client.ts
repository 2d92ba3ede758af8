import { connect, type Socket } from "node:net";
import { INTERACTIONS_PATH } from "../src/adapters/discord-http/endpoint.ts";

/** A connection that sent part of a request and stalls (a slow or hostile client). */
export interface Stalled {
  socket: Socket;
  /** Resolves once the server closed the connection, with what it answered. */
  closed: Promise<string>;
  isClosed: () => boolean;
  received: () => string;
}

/**
 * Opens a connection to 127.0.0.1:`port`, writes `head` and then `bodyBytes` bytes of body, and
 * stalls; the socket goes into `sockets` for the test to destroy.
 */
export function stalledRequest(
  port: number,
  sockets: Socket[],
  head: string,
  bodyBytes = 0,
): Stalled {
  const socket = connect(port, "127.0.0.1");
  sockets.push(socket);
  let received = "";
  let done = false;
  // Read what the server answers, or its close would never be seen.
  socket.on("data", (chunk) => {
    received += chunk.toString("latin1");
  });
  // A reset (unread bytes left behind) is a close too.
  socket.on("error", () => {});
  const closed = new Promise<string>((resolve) =>
    socket.once("close", () => {
      done = true;
      resolve(received);
    }),
  );
  socket.write(head);
  if (bodyBytes > 0) socket.write(Buffer.alloc(bodyBytes, 0x61));
  return { socket, closed, isClosed: () => done, received: () => received };
}

/** Headers of a signed-looking Discord interaction whose body is `length` bytes. */
export function interactionHead(
  length: number,
  signature = "ab".repeat(64),
  ts = String(Math.floor(Date.now() / 1000)),
): string {
  return [
    `POST ${INTERACTIONS_PATH} HTTP/1.1`,
    "Host: 127.0.0.1",
    "Content-Type: application/json",
    `X-Signature-Timestamp: ${ts}`,
    `X-Signature-Ed25519: ${signature}`,
    `Content-Length: ${length}`,
    "",
    "",
  ].join("\r\n");
}
