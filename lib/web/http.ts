/** Turning domain results and errors into HTTP answers, with web-standard Request/Response only. */
import type { z } from "zod";
import {
  CrossSiteRequest,
  PayloadTooLarge,
  problemFor,
  Problem,
  UnsupportedMediaType,
  ValidationProblem,
} from "../core/problems";
import { parseOrThrow } from "../core/validation";

/** The one way a problem becomes a response (RFC 9457), fresh or replayed from an idempotency record. */
export function problemResponse(problem: Problem): Response {
  return Response.json(problem.toJSON(), { status: problem.status, headers: problemHeaders(problem) });
}

export const problemHeaders = (problem: Problem): Record<string, string> => ({
  "Content-Type": "application/problem+json",
  ...problem.headers,
});

/**
 * Runs a handler body, answering typed problems as problem+json, a database that cannot be reached as a
 * 503, and anything unexpected as a logged 500. The request is checked first (`requestProblem`): every
 * route answers through here, so no route can forget the checks.
 */
export async function respond(request: Request, handler: () => Promise<Response>): Promise<Response> {
  const refused = requestProblem(request);
  if (refused) return problemResponse(refused);
  try {
    return await handler();
  } catch (error) {
    const problem = problemFor(error);
    if (problem) {
      if (!(error instanceof Problem))
        console.error("[http] database unavailable:", error instanceof Error ? error.message : error);
      return problemResponse(problem);
    }
    console.error("[http] unexpected error:", error);
    return problemResponse(
      new Problem(500, "internal", "Internal error", "The server failed unexpectedly; see its log."),
    );
  }
}

/** The largest request body any route reads (bytes): a bigger one is refused before it is read through. */
export const maxBodyBytes = 64 * 1024;

/**
 * How long the rest of a refused body is read and dropped after the answer, as nginx's lingering close
 * does: a client still sending it would otherwise get a reset (EPIPE) instead of its 413. A client still
 * sending after that is cut off.
 */
export const lingerMs = 5_000;

/**
 * Reads a JSON body; a missing or broken body is a validation problem like any other. A body without a
 * `Content-Length` (chunked) is counted as it arrives and refused as soon as it passes `maxBodyBytes`.
 */
export async function parseJsonBody<T extends z.ZodType>(request: Request, schema: T): Promise<z.infer<T>> {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(await readBody(request)));
  } catch (error) {
    if (error instanceof PayloadTooLarge) throw error;
    throw new ValidationProblem([{ field: "body", message: "must be a JSON document" }]);
  }
  return parseOrThrow(schema, body, "body");
}

async function readBody(request: Request): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    length += read.value.byteLength;
    if (length > maxBodyBytes) {
      void dropRest(reader);
      throw new PayloadTooLarge(maxBodyBytes, null);
    }
    chunks.push(read.value);
  }
  return Buffer.concat(chunks);
}

// Reads and drops what is left of a refused body while the 413 is sent (see lingerMs), then cancels it.
async function dropRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  const cutOff = setTimeout(() => void reader.cancel().catch(() => undefined), lingerMs);
  try {
    while (!(await reader.read()).done);
  } catch {
    // The client went away: nothing left to drop.
  } finally {
    clearTimeout(cutOff);
  }
}

/**
 * A header as the client wrote it. Node hands header bytes over as latin1 (one character per byte), so a
 * value sent as UTF-8 (`été`) arrives as `Ã©tÃ©`; bytes that are valid UTF-8 are read as UTF-8, others
 * are left as latin1.
 */
export function headerText(request: Request, name: string): string | null {
  const raw = request.headers.get(name);
  if (raw === null) return null;
  try {
    return utf8.decode(Buffer.from(raw, "latin1"));
  } catch {
    return raw;
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

// The scheme the client used: a TLS-terminating proxy in front says so in X-Forwarded-Proto.
const schemeOf = (request: Request): string =>
  request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() || new URL(request.url).protocol.replace(":", "");

/** Whether the client reached the app over https (then cookies get `Secure`). */
export const servedOverHttps = (request: Request): boolean => schemeOf(request) === "https";

/** The app's own origin as this request addressed it (its Host header), to compare an `Origin` with. */
export function ownOrigin(request: Request): string {
  const host = request.headers.get("host") ?? new URL(request.url).host;
  return `${schemeOf(request)}://${host}`;
}

const stateChangingMethods = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * What is wrong with a request before any route looks at it: a cross-site request that would change
 * state (CSRF), a malformed path, a body that is not JSON; null when nothing is. (Methods, unknown paths
 * and a stated body size are refused earlier still, by the request guard.)
 */
export function requestProblem(request: Request): Problem | null {
  const pathname = new URL(request.url).pathname;
  return stateChangingMethods.has(request.method)
    ? (crossSiteProblem(request) ?? pathProblem(pathname) ?? mediaTypeProblem(request))
    : pathProblem(pathname);
}

/**
 * A browser names where a request comes from (`Origin`, `Sec-Fetch-Site`); another site's page may not
 * change state here. A request with neither header is not a browser's (a script, curl) and passes.
 */
function crossSiteProblem(request: Request): CrossSiteRequest | null {
  const fetchSite = request.headers.get("sec-fetch-site");
  if (fetchSite === "cross-site" || fetchSite === "same-site")
    return new CrossSiteRequest(`Sec-Fetch-Site is ${fetchSite}`);
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== ownOrigin(request))
    return new CrossSiteRequest(`Origin ${origin} is not ${ownOrigin(request)}`);
  return null;
}

// A path parameter is named after the segment before it, as its route names it; others are "path".
const parameterAfter: Record<string, string> = { users: "userId" };

// Next.js would fail decoding such a segment into a route's parameter with a bare 500 (see proxy.ts).
export function pathProblem(pathname: string): ValidationProblem | null {
  const segments = pathname.split("/");
  const bad = segments.findIndex((segment) => !decodes(segment));
  if (bad < 0) return null;
  const field = parameterAfter[segments[bad - 1] ?? ""] ?? "path";
  return new ValidationProblem([{ field, message: `"${segments[bad]}" is not valid percent-encoding` }]);
}

function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

function mediaTypeProblem(request: Request): UnsupportedMediaType | null {
  const length = request.headers.get("content-length");
  const hasBody = (length !== null && length !== "0") || request.headers.has("transfer-encoding");
  const contentType = request.headers.get("content-type");
  const mediaType = contentType?.split(";")[0]?.trim().toLowerCase();
  return hasBody && mediaType !== "application/json" ? new UnsupportedMediaType(contentType) : null;
}
