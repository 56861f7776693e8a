/** The simulated provider's answers in Auth0's shape: its refusals, its errors, and how they leave as HTTP. */
import { HttpResponse } from "msw";
import { IdpError } from "./store";

/** An answer as the provider gives it: status, Auth0-shaped body, headers. */
export type Answer = { status: number; body: unknown; headers?: Record<string, string> };

export function errorAnswer(error: IdpError): Answer {
  return {
    status: error.statusCode,
    body: { statusCode: error.statusCode, error: error.error, message: error.message, errorCode: error.errorCode },
  };
}

/** The provider's answer to a request it did not apply within its limit: it never will. */
export const notAppliedInTime = new IdpError(
  504,
  "Gateway Timeout",
  "The request was not processed in time; it was not applied",
  "request_timeout",
);

/** The answer to a call applied after the deadline its own header gave (`X-Deadline-Ms`): it is not applied. */
export const notAppliedPastDeadline = new IdpError(
  504,
  "Gateway Timeout",
  "The request's deadline had passed before it could be processed; it was not applied",
  "deadline_exceeded",
);

export const errorCodeOf = (answer: Answer): string | undefined =>
  (answer.body as { errorCode?: string } | null)?.errorCode;

/** A write refused because its fencing token was older than one the provider had seen. */
export const isFenced = (answer: Answer): boolean => errorCodeOf(answer) === "fenced_token";

/** The provider's own work, its refusals (an `IdpError`) turned into their answers. */
export async function applied(perform: () => Promise<Answer>): Promise<Answer> {
  try {
    return await perform();
  } catch (error) {
    if (error instanceof IdpError) return errorAnswer(error);
    throw error;
  }
}

export const internalError = () =>
  errorAnswer(new IdpError(500, "Internal Server Error", "Internal error", "internal_error"));

export const unavailable = () =>
  errorAnswer(
    new IdpError(503, "Service Unavailable", "The service is temporarily unavailable", "temporarily_unavailable"),
  );

export function rateLimited(retryAfterSeconds: number): Answer {
  const answer = errorAnswer(
    new IdpError(429, "Too Many Requests", "Global limit has been reached", "too_many_requests"),
  );
  return {
    ...answer,
    headers: {
      "Retry-After": String(retryAfterSeconds),
      "x-ratelimit-limit": "50",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": String(Math.ceil(Date.now() / 1000) + retryAfterSeconds),
    },
  };
}

/** An answer as it leaves: JSON with its status, or (`network-error`) no HTTP answer at all, the connection reset. */
export function toResponse(answer: Answer | "network-error"): Response {
  if (answer === "network-error") return HttpResponse.error();
  return HttpResponse.json(answer.body as Record<string, unknown>, { status: answer.status, headers: answer.headers });
}
