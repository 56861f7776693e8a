import type { Request } from "@playwright/test";

/** A held request as the kit sends it on a connection of its own: what the browser was about to send. */
export interface WireRequest {
  method: string;
  url: URL;
  /** Lower-case names, without the ones that belong to a connection (the kit's connection sets its own). */
  headers: Record<string, string>;
  body: Buffer;
}

/** An answer the kit read from its own connection, to hand to the page (`route.fulfill`). */
export interface WireResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

// A connection's own headers, and accept-encoding: the kit hands the page the body it reads as it is, so it
// asks for no compression the browser would have undone.
const notForwarded = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "content-length",
  "accept-encoding",
]);

/** The held request's method, URL, headers (its cookies included) and body. */
export async function wireRequestOf(request: Request): Promise<WireRequest> {
  const headers = Object.entries(await request.allHeaders()).filter(
    ([name]) => !name.startsWith(":") && !notForwarded.has(name),
  );
  return {
    method: request.method(),
    url: new URL(request.url()),
    headers: Object.fromEntries(headers),
    body: request.postDataBuffer() ?? Buffer.alloc(0),
  };
}

/** The answer's headers as `route.fulfill` takes them: its own length, without the connection's. */
export function fulfilledHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !name.startsWith(":") && !notForwarded.has(name)),
  );
}
