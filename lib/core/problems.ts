/**
 * Typed domain errors. Each knows its HTTP status and RFC 9457 problem fields, so route handlers only
 * map them (see `lib/web/http.ts`); nothing here depends on a web framework.
 */
import { isDatabaseUnavailable } from "./db-errors";

const problemTypeBase = "https://lease-lock-lab.dev/problems";

/** Every problem's slug, the last part of its `type`: the one list of them. */
export const problemSlugs = [
  "validation",
  "not-signed-in",
  "forbidden",
  "user-not-found",
  "identity-not-linked",
  "operation-in-progress",
  "stale-write",
  "provider-failed",
  "provider-deadline",
  "lab-disabled",
  "lease-lost",
  "fenced",
  "idempotency-key-reused",
  "recovery-failed",
  "unsupported-media-type",
  "method-not-allowed",
  "not-found",
  "payload-too-large",
  "unreadable-request",
  "csrf",
  "database-unavailable",
  "operation-crashed",
  "experiment-running",
  "experiment-not-found",
  "run-not-found",
  "spans-not-found",
  "peer-not-found",
  "peer-unreachable",
  "redis-unavailable",
  "part-not-running",
  "internal",
  "replayed",
] as const;

export type ProblemSlug = (typeof problemSlugs)[number];

/** The slug of a problem's `type` (a URL of ours), or null for any other text. */
export function problemSlug(type: string | null | undefined): ProblemSlug | null {
  const slug = type?.startsWith(`${problemTypeBase}/`) ? type.slice(problemTypeBase.length + 1) : null;
  return problemSlugs.find((known) => known === slug) ?? null;
}

export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly slug: ProblemSlug,
    readonly title: string,
    readonly detail: string,
    readonly extensions: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }

  get type(): string {
    return `${problemTypeBase}/${this.slug}`;
  }

  toJSON(): Record<string, unknown> {
    return { type: this.type, title: this.title, status: this.status, detail: this.detail, ...this.extensions };
  }
}

/** A problem answered before and kept (an idempotency record), answered again exactly as it was. */
export class ReplayedProblem extends Problem {
  constructor(
    status: number,
    private readonly body: Record<string, unknown>,
    headers: Record<string, string>,
  ) {
    super(status, "replayed", String(body.title ?? ""), String(body.detail ?? ""), {}, headers);
  }

  override get type(): string {
    return String(this.body.type);
  }

  override toJSON(): Record<string, unknown> {
    return this.body;
  }
}

export interface FieldError {
  field: string;
  message: string;
}

export class ValidationProblem extends Problem {
  constructor(errors: FieldError[]) {
    super(
      400,
      "validation",
      "The request is not valid",
      errors.map((error) => `${error.field}: ${error.message}`).join("; "),
      { errors },
    );
  }
}

export class NotSignedIn extends Problem {
  constructor() {
    super(401, "not-signed-in", "Sign in first", "This call needs a session: POST /api/session with a demo user's id.");
  }
}

export class NotYourUser extends Problem {
  constructor() {
    super(403, "forbidden", "Not your user", "A session may only read and change its own user.");
  }
}

export class UserNotFound extends Problem {
  constructor(userId: string) {
    super(404, "user-not-found", "No such user", `There is no demo user "${userId}".`);
  }
}

export class IdentityNotLinked extends Problem {
  constructor(identityId: string, userId: string) {
    super(
      404,
      "identity-not-linked",
      "Identity not linked to this user",
      `${identityId} is not one of ${userId}'s identities.`,
    );
  }
}

export class OperationInProgress extends Problem {
  constructor(
    expiresAt: Date | null,
    remainingMs: number,
    detail = "Another request holds this user's lease; try again when it ends.",
    /** The earlier operation whose provider call may still land, when that is what the answer waits for. */
    awaitedOperationId?: string,
  ) {
    super(
      409,
      "operation-in-progress",
      "Another operation is already in progress",
      detail,
      { expiresAt: expiresAt?.toISOString() ?? null, ...(awaitedOperationId ? { awaitedOperationId } : {}) },
      { "Retry-After": String(Math.max(1, Math.ceil(remainingMs / 1000))) },
    );
  }
}

export class StaleWrite extends Problem {
  constructor(userId: string) {
    super(
      409,
      "stale-write",
      "The user changed while this operation ran",
      `Another write to ${userId} landed after this operation read it, so its result was not saved; the provider was already changed.`,
    );
  }
}

export type ProviderStep = "unlink" | "link" | "rename";

export class ProviderStepFailed extends Problem {
  constructor(step: ProviderStep, providerStatus: number | null, providerMessage: string) {
    super(
      502,
      "provider-failed",
      "The identity provider failed a step",
      `The ${step} call failed: ${providerMessage}`,
      { step, providerStatus },
    );
  }
}

/**
 * A call that ran out of time: the switch's deadline (under the lease, the lease's; under the other strategies,
 * and the textbook lease, a limit of their own), or the rename's (which takes no lease).
 */
export class ProviderDeadlineExceeded extends Problem {
  constructor(step: ProviderStep) {
    const whose = step === "rename" ? "rename's" : "switch's";
    super(
      504,
      "provider-deadline",
      `The ${whose} deadline ran out`,
      `The ${step} call did not answer before the ${whose} deadline.`,
      { step },
    );
  }
}

export class LabDisabled extends Problem {
  constructor() {
    super(404, "lab-disabled", "The lab is switched off", "This instance runs with LAB_ENABLED=false.");
  }
}

export class LeaseLost extends Problem {
  constructor(beforeStep: string) {
    super(
      409,
      "lease-lost",
      "The lease was lost",
      beforeStep === "save"
        ? `This operation's lease expired and may have been taken over before its save, so the save changed nothing.`
        : `This operation's lease expired and may have been taken over before the ${beforeStep} step, so it stopped.`,
      { step: beforeStep },
    );
  }
}

export class FencedOff extends Problem {
  constructor(step: ProviderStep | "recover", providerMessage: string) {
    super(
      409,
      "fenced",
      "The provider refused a stale fencing token",
      `The ${step} call was refused: ${providerMessage}`,
      { step },
    );
  }
}

export class IdempotencyKeyReused extends Problem {
  constructor() {
    super(
      422,
      "idempotency-key-reused",
      "Idempotency-Key reused with a different request",
      "This key was already used for another request body.",
    );
  }
}

export class RecoveryFailed extends Problem {
  constructor(detail: string, providerStatus: number | null) {
    super(502, "recovery-failed", "A half-done switch could not be recovered", detail, {
      step: "recover",
      providerStatus,
    });
  }
}

export class UnsupportedMediaType extends Problem {
  constructor(contentType: string | null) {
    super(
      415,
      "unsupported-media-type",
      "The body must be JSON",
      `A request body must be sent as application/json, not ${contentType ?? "without a Content-Type"}.`,
    );
  }
}

export class MethodNotAllowed extends Problem {
  constructor(method: string, path: string, allowed: readonly string[]) {
    super(
      405,
      "method-not-allowed",
      "Method not allowed",
      `${path} does not take ${method}; it takes ${allowed.join(", ")}.`,
      { allow: allowed },
      { Allow: allowed.join(", ") },
    );
  }
}

export class ApiPathNotFound extends Problem {
  constructor(path: string) {
    super(404, "not-found", "No such API path", `There is no API at ${path}.`);
  }
}

/**
 * A request Node's HTTP parser refused before any code of ours saw it: bytes that are not HTTP (a control character
 * in a header, a broken request line), headers past its 16 KB, chunk extensions past its limit, or a request that
 * took too long to arrive (its headers, or the whole of it).
 */
export class UnreadableRequest extends Problem {
  constructor(status: 400 | 408 | 413 | 431, reason: string) {
    const titles = {
      400: "The request is not valid HTTP",
      408: "The request took too long to arrive",
      413: "The request's chunk extensions are too large",
      431: "The request's headers are too large",
    };
    super(status, "unreadable-request", titles[status], `Node's HTTP parser refused it: ${reason}.`);
  }
}

export class PayloadTooLarge extends Problem {
  constructor(limitBytes: number, sentBytes: number | null) {
    super(
      413,
      "payload-too-large",
      "The body is too large",
      `A request body may be at most ${limitBytes} bytes; this one ${
        sentBytes === null ? "went past that" : `is ${sentBytes} bytes`
      }.`,
      { limitBytes },
    );
  }
}

export class CrossSiteRequest extends Problem {
  constructor(reason: string) {
    super(
      403,
      "csrf",
      "Cross-site request refused",
      `A request that changes state must come from this app: ${reason}.`,
    );
  }
}

export class DatabaseUnavailable extends Problem {
  constructor() {
    super(
      503,
      "database-unavailable",
      "The database cannot be reached",
      "The app could not reach its database in time; try again shortly.",
      {},
      { "Retry-After": "5" },
    );
  }
}

/**
 * The problem a route answers for `error`: a typed problem as it is, a database that cannot be reached as
 * a 503; anything else (a bug, answered 500) is undefined.
 */
export function problemFor(error: unknown): Problem | undefined {
  if (error instanceof Problem) return error;
  if (isDatabaseUnavailable(error)) return new DatabaseUnavailable();
  return undefined;
}

/**
 * The lab's `crash` fault: the operation stopped dead where a real process would have died. A dead process
 * answers nothing; the lab answers this, so the page can say what happened. The lease stays until its TTL.
 */
export class OperationCrashed extends Problem {
  constructor(detail: string) {
    super(
      503,
      "operation-crashed",
      "The operation crashed (lab fault)",
      `${detail}: it stopped dead, without releasing its lease; the next holder after the TTL recovers it.`,
      {},
      { "Retry-After": "1" },
    );
  }
}

/**
 * One experiment runs at a time, and the lab's settings and state are its own while it runs: a second run, or a
 * change of them from outside it (its end puts back what it found, so the change would be undone), waits for its end.
 */
export class ExperimentRunning extends Problem {
  constructor(
    detail = "Only one experiment runs at a time, and none starts while the lab's settings are being changed or " +
      "reset; try again when it ends.",
  ) {
    super(409, "experiment-running", "An experiment is running", detail, {}, { "Retry-After": "5" });
  }
}

export class ExperimentNotFound extends Problem {
  constructor(id: string) {
    super(
      404,
      "experiment-not-found",
      "No such experiment",
      `There is no experiment "${id}": GET /api/lab/experiments lists them.`,
    );
  }
}
