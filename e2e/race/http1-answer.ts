import type { Duplex } from "node:stream";
import type { WireResponse } from "./wire.js";

/**
 * Reads one HTTP/1.1 answer from the kit's own connection: the head (past any 1xx), then the body by its
 * content-length, its chunks, or up to the close. The kit asks for `connection: close`, so nothing follows.
 */
export function readAnswer(socket: Duplex, method: string): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const settle = (ended: boolean) => {
      try {
        const answer = parseAnswer(received, method, ended);
        if (answer) resolve(answer);
        else if (ended)
          reject(new Error(`the server closed the connection ${received.length ? "mid-answer" : "without an answer"}`));
        if (answer || ended) socket.destroy();
      } catch (error) {
        reject(error);
        socket.destroy();
      }
    };
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      settle(false);
    });
    socket.on("end", () => settle(true));
    socket.on("error", reject);
  });
}

/** The answer in `received`, or null while it is incomplete; `ended`: the server closed the connection. */
export function parseAnswer(received: Buffer, method: string, ended: boolean): WireResponse | null {
  let start = 0;
  for (;;) {
    const headEnd = received.indexOf("\r\n\r\n", start);
    if (headEnd < 0) return null;
    const [statusLine = "", ...lines] = received.toString("latin1", start, headEnd).split("\r\n");
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
    if (!status) throw new Error(`not an HTTP/1.1 answer: ${JSON.stringify(statusLine.slice(0, 80))}`);
    start = headEnd + 4;
    // An interim answer (100 Continue, 103 Early Hints): the real one follows.
    if (status < 200) continue;
    const headers = headersOf(lines);
    const rest = received.subarray(start);
    if (method === "HEAD" || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0) };
    if (/\bchunked\b/i.test(headers["transfer-encoding"] ?? "")) {
      const body = dechunked(rest);
      return body && { status, headers, body };
    }
    if (headers["content-length"] !== undefined) {
      const length = Number(headers["content-length"]);
      return rest.length >= length ? { status, headers, body: rest.subarray(0, length) } : null;
    }
    return ended ? { status, headers, body: rest } : null;
  }
}

function headersOf(lines: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    // route.fulfill takes several set-cookie headers one a line; other repeated headers join as a list.
    headers[name] =
      headers[name] === undefined ? value : `${headers[name]}${name === "set-cookie" ? "\n" : ", "}${value}`;
  }
  return headers;
}

/** A chunked body put together, or null until its last chunk (and the trailers' end) is in. */
function dechunked(data: Buffer): Buffer | null {
  const chunks: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf("\r\n", at);
    if (lineEnd < 0) return null;
    const size = parseInt(data.toString("latin1", at, lineEnd).split(";")[0]!.trim(), 16);
    if (Number.isNaN(size)) throw new Error("a chunked answer with a malformed chunk size");
    at = lineEnd + 2;
    if (size === 0) {
      const trailersEnd = data.subarray(at, at + 2).toString("latin1") === "\r\n" ? at : data.indexOf("\r\n\r\n", at);
      return trailersEnd < 0 ? null : Buffer.concat(chunks);
    }
    if (data.length < at + size + 2) return null;
    chunks.push(data.subarray(at, at + size));
    at += size + 2;
  }
}
