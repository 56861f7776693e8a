/**
 * Methods an API path does not take, answered before Next.js sees the request. Next.js answers such a
 * method with a bare 405 (no `Allow`, no body), and a `TRACE` with a text/plain 500: it builds a web
 * `Request` for every request, and the fetch standard forbids that method, so the constructor throws
 * before any route or proxy runs. Only the Node server's own `request` event comes earlier.
 */
import { Server, type IncomingMessage, type ServerResponse } from "node:http";
import { ApiPathNotFound, MethodNotAllowed, type Problem } from "../core/problems";
import { allowedMethods } from "./api-routes";
import { pathProblem, problemHeaders } from "./http";

/**
 * What is wrong with `method` on the request target `target` (path and query, as sent): a method its
 * route does not take (405 with `Allow`), or an API path no route has (404, or 400 if it is malformed).
 * Null for anything outside `/api/` and for every method a route takes.
 */
export function methodProblem(method: string, target: string): Problem | null {
  const pathname = target.split(/[?#]/, 1)[0] ?? "";
  if (!pathname.startsWith("/api/")) return null;
  const allowed = allowedMethods(pathname);
  if (allowed === null) return pathProblem(pathname) ?? new ApiPathNotFound(pathname);
  return allowed.includes(method) ? null : new MethodNotAllowed(method, pathname, allowed);
}

const installed = Symbol.for("lease-lock-lab.method-guard");

/** Puts `methodProblem` in front of every HTTP server of this process (the one `next start` runs). */
export function installMethodGuard(): void {
  const prototype = Server.prototype as Server & { [installed]?: true };
  if (prototype[installed]) return;
  prototype[installed] = true;
  const emit = prototype.emit as (this: Server, event: string | symbol, ...args: unknown[]) => boolean;
  prototype.emit = function (this: Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event === "request" && answered(args[0] as IncomingMessage, args[1] as ServerResponse)) return true;
    return emit.call(this, event, ...args);
  };
}

function answered(request: IncomingMessage, response: ServerResponse): boolean {
  const problem = methodProblem(request.method ?? "", request.url ?? "");
  if (!problem) return false;
  const body = JSON.stringify(problem.toJSON());
  response.writeHead(problem.status, { ...problemHeaders(problem), "Content-Length": Buffer.byteLength(body) });
  response.end(body);
  return true;
}
