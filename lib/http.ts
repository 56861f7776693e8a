/** Turning domain results and errors into HTTP answers, with web-standard Request/Response only. */
import { z } from "zod";
import { Problem, ValidationProblem, type FieldError } from "./problems";

export function problemResponse(problem: Problem): Response {
  return Response.json(problem.toJSON(), {
    status: problem.status,
    headers: { "Content-Type": "application/problem+json", ...problem.headers },
  });
}

/** Runs a handler body, answering typed problems as problem+json and anything unexpected as a logged 500. */
export async function respond(handler: () => Promise<Response>): Promise<Response> {
  try {
    return await handler();
  } catch (error) {
    if (error instanceof Problem) return problemResponse(error);
    console.error("[http] unexpected error:", error);
    return problemResponse(new Problem(500, "internal", "Internal error", "The server failed unexpectedly; see its log."));
  }
}

export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, at = ""): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ValidationProblem(fieldErrors(result.error, at));
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

function fieldErrors(error: z.ZodError, at: string): FieldError[] {
  return error.issues.map((issue) => {
    const keys = issue.code === "unrecognized_keys" ? issue.keys.join(", ") : "";
    const path = [at, ...issue.path.map(String), keys].filter(Boolean).join(".");
    return { field: path || at || "body", message: issue.message };
  });
}

/** An answer kept from an earlier request (idempotency), sent again as it was. */
export function storedAnswerResponse(answer: { status: number; body: unknown; headers: Record<string, string> }): Response {
  return Response.json(answer.body, { status: answer.status, headers: answer.headers });
}
