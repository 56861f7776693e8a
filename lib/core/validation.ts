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
