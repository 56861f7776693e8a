/** Turning domain results and errors into HTTP answers, with web-standard Request/Response only. */
import { z } from "zod";
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
  return parseOrThrow(schema, jsonOf(await readBody(request)), "body");
}

/**
 * A query string's parameters, checked by `schema` (a strict object: an unknown name is a 400 naming it). A name
 * given twice is a 400 too: which one was meant is not ours to guess (`URLSearchParams.get` takes the first).
 */
export function parseQuery<T extends z.ZodType>(request: Request, schema: T): z.infer<T> {
  const params = new URL(request.url).searchParams;
  const repeated = [...new Set(params.keys())].filter((name) => params.getAll(name).length > 1);
  if (repeated.length > 0)
    throw new ValidationProblem(repeated.map((name) => ({ field: name, message: "must be given once" })));
  return parseOrThrow(schema, Object.fromEntries(params), "");
}

/**
 * For a write that takes no body: none, or `{}`. Anything else is refused as a body would be: broken JSON
 * or a field (every field is unknown here) a 400, too long a 413.
 */
export async function parseEmptyBody(request: Request): Promise<void> {
  const bytes = await readBody(request);
  if (bytes.byteLength > 0) parseOrThrow(z.strictObject({}), jsonOf(bytes), "body");
}

function jsonOf(bytes: Uint8Array): unknown {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new ValidationProblem([{ field: "body", message: "must be a JSON document" }]);
  }
  const unstorableAt = unstorableTextIn(body);
  if (unstorableAt !== null)
    throw new ValidationProblem([
      { field: unstorableAt, message: "must not contain a NUL character (\\u0000) or an unpaired surrogate" },
    ]);
  return body;
}

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// Neither has a place in PostgreSQL: its text holds no NUL byte (a 500), and half a surrogate pair has no UTF-8
// (pg sends U+FFFD in a text parameter, storing another text than was sent; a JSON one fails, a 500).
const unstorable = (text: string) => text.includes("\u0000") || loneSurrogate.test(text);

/** A place in a body: its key, and the place holding it (null: the body). */
interface Place {
  key: string;
  in: Place | null;
}

function fieldAt(place: Place | null): string {
  const keys: string[] = [];
  for (let at = place; at; at = at.in) keys.push(at.key);
  return ["body", ...keys.reverse()].join(".");
}

/**
 * Where in a parsed body a string (a value, or a key: then the object holding it) holds text PostgreSQL cannot
 * store, as the validation problems name fields ("body.observed.k"); null when nowhere. A route storing it would
 * fail in the database with a 500, after what it did before (a rename's call to the provider). Without
 * recursion, and each place's name made only for the one found: a 64 KB body nests deeper than the stack.
 */
function unstorableTextIn(body: unknown): string | null {
  const pending: { value: unknown; place: Place | null }[] = [{ value: body, place: null }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value, place } = next;
    if (typeof value === "string") {
      if (unstorable(value)) return fieldAt(place);
    } else if (typeof value === "object" && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        if (unstorable(key)) return fieldAt(place);
        pending.push({ value: inner, place: { key, in: place } });
      }
    }
  }
  return null;
}

async function readBody(request: Request): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  // A body that breaks off (the client went away, a broken chunk) is bad input like any other, not a bug of ours.
  const next = () =>
    reader.read().catch(() => {
      throw new ValidationProblem([{ field: "body", message: "could not be read to its end" }]);
    });
  for (let read = await next(); !read.done; read = await next()) {
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
