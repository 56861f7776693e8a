/** Input checked with zod, failures turned into one 400 problem naming each field and why. */
import { z } from "zod";
import { ValidationProblem, type FieldError } from "./problems";

export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, at = ""): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ValidationProblem(fieldErrors(result.error, at));
}

function fieldErrors(error: z.ZodError, at: string): FieldError[] {
  return error.issues.map((issue) => {
    const keys = issue.code === "unrecognized_keys" ? issue.keys.join(", ") : "";
    const path = [at, ...issue.path.map(String), keys].filter(Boolean).join(".");
    return { field: path || at || "body", message: issue.message };
  });
}

/**
 * Any value whose arrays and objects nest at most `maxDepth` deep, checked before any other schema reads it:
 * JSON parses iteratively, but serialising it again (`JSON.stringify`, to store or answer it) recurses, and
 * overflowed the stack at about 5,000 levels, which 13 KB of brackets reach. Pipe the real schema after it.
 */
export const nestedAtMost = (maxDepth: number) =>
  z.unknown().refine((value) => depthOf(value, maxDepth) <= maxDepth, {
    message: `must nest arrays and objects at most ${maxDepth} deep`,
    abort: true,
  });

/** How deep `value` nests arrays and objects (a scalar: 0), counted without recursion and only just past `limit`. */
function depthOf(value: unknown, limit: number): number {
  let deepest = 0;
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (typeof next.value !== "object" || next.value === null) continue;
    deepest = Math.max(deepest, next.depth);
    if (deepest > limit) break;
    for (const inner of Object.values(next.value)) pending.push({ value: inner, depth: next.depth + 1 });
  }
  return deepest;
}
