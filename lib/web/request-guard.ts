/**
 * What the Node server refuses before Next.js sees the request: methods an API path does not take, API
 * paths no route has, and bodies that say they are over the limit. Next.js answers such a method with a
 * bare 405 (no `Allow`, no body), and a `TRACE` with a text/plain 500: it builds a web `Request` for every
 * request, and the fetch standard forbids that method, so the constructor throws before any route or
 * proxy runs. Only the Node server's own `request` event comes earlier.
 */
import { Server, STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { ApiPathNotFound, MethodNotAllowed, PayloadTooLarge, UnreadableRequest, type Problem } from "../core/problems";
import { allowedMethods } from "./api-routes";
import { lingerMs, maxBodyBytes, pathProblem, problemHeaders } from "./http";

/**
 * What is wrong with a request to `target` (path and query, as sent): a method its route does not take
 * (405 with `Allow`), an API path no route has (404, or 400 if it is malformed), a `Content-Length` over
 * `maxBodyBytes` (413, before a byte of the body is read). Null for anything outside `/api/`, and for
 * every method a route takes with a body it may read.
 */
export function guardProblem(method: string, target: string, contentLength: string | undefined): Problem | null {
  const pathname = target.split(/[?#]/, 1)[0] ?? "";
  if (pathname !== "/api" && !pathname.startsWith("/api/")) return null;
  const allowed = allowedMethods(pathname);
  if (allowed === null) return pathProblem(pathname) ?? new ApiPathNotFound(pathname);
  if (!allowed.includes(method)) return new MethodNotAllowed(method, pathname, allowed);
  const length = Number(contentLength ?? 0);
  return length > maxBodyBytes ? new PayloadTooLarge(maxBodyBytes, length) : null;
}

const installed = Symbol.for("lease-lock-lab.request-guard");

/** Puts `guardProblem` in front of every HTTP server of this process (the one `next start` runs). */
export function installRequestGuard(): void {
  const prototype = Server.prototype as Server & { [installed]?: true };
  if (prototype[installed]) return;
  prototype[installed] = true;
  const emit = prototype.emit as (this: Server, event: string | symbol, ...args: unknown[]) => boolean;
  prototype.emit = function (this: Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event === "request" && answered(args[0] as IncomingMessage, args[1] as ServerResponse)) return true;
    if (event === "clientError") return answerUnreadable(args[0] as Error & { code?: string }, args[1] as Duplex);
    return emit.call(this, event, ...args);
  };
}

/** Node's own statuses for what its parser refuses; anything else it refuses is a 400. */
const unreadableStatuses: Record<string, 408 | 413 | 431> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/**
 * What Node's parser refused (its `clientError`), answered as a problem as every other error is, where Node
 * would write a bare status line with no body. There is no request or response object: written to the socket,
 * then the socket destroyed, as Node does (a client that never closes its side would hold it open).
 */
function answerUnreadable(error: Error & { code?: string }, socket: Duplex): boolean {
  const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  // The client went away, or an answer to an earlier request on this connection has begun: nothing can be said.
  if (error.code === "ECONNRESET" || !socket.writable || answering?.headersSent) {
    socket.destroy();
    return true;
  }
  const status = unreadableStatuses[error.code ?? ""] ?? 400;
  const problem = new UnreadableRequest(status, error.message);
  const body = JSON.stringify(problem.toJSON());
  const headers = {
    ...problemHeaders(problem),
    "Content-Length": String(Buffer.byteLength(body)),
    Connection: "close",
  };
  const head = [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`, () => socket.destroy());
  return true;
}

function answered(request: IncomingMessage, response: ServerResponse): boolean {
  const problem = guardProblem(request.method ?? "", request.url ?? "", request.headers["content-length"]);
  if (!problem) return false;
  const body = JSON.stringify(problem.toJSON());
  response.writeHead(problem.status, { ...problemHeaders(problem), "Content-Length": Buffer.byteLength(body) });
  response.end(body);
  // Whatever body comes is dropped unread, for at most lingerMs (see there).
  const cutOff = setTimeout(() => request.destroy(), lingerMs);
  request.once("close", () => clearTimeout(cutOff)).resume();
  return true;
}
