/** Turning domain results and errors into HTTP answers, with web-standard Request/Response only. */
import type { z } from "zod";
import { isDatabaseUnavailable } from "../core/db-errors";
import { DatabaseUnavailable, Problem, ValidationProblem } from "../core/problems";
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
 * 503, and anything unexpected as a logged 500.
 */
export async function respond(handler: () => Promise<Response>): Promise<Response> {
  try {
    return await handler();
  } catch (error) {
    if (error instanceof Problem) return problemResponse(error);
    if (isDatabaseUnavailable(error)) {
      console.error("[http] database unavailable:", error instanceof Error ? error.message : error);
      return problemResponse(new DatabaseUnavailable());
    }
    console.error("[http] unexpected error:", error);
    return problemResponse(
      new Problem(500, "internal", "Internal error", "The server failed unexpectedly; see its log."),
    );
  }
}

/** Reads a JSON body; a missing or broken body is a validation problem like any other. */
export async function parseJsonBody<T extends z.ZodType>(request: Request, schema: T): Promise<z.infer<T>> {
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    throw new ValidationProblem([{ field: "body", message: "must be a JSON document" }]);
  }
  return parseOrThrow(schema, body, "body");
}

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
