/**
 * The typed client for the identity provider's Management API (Auth0-shaped). Every call carries the
 * operation's id (and its fencing token, when it has one) and the caller's AbortSignal, so a call can
 * never outlive the deadline its caller set.
 */
import { identityIdOf, splitIdentityId } from "../../db/schema";
import { config } from "../core/config";
import { sleep, type Deadline } from "@lease-lock-lab/lease";
import { requestJson, type JsonAnswer } from "./http-json";

/** The provider's answers as Auth0 spells them: these field names go no further than the provider's clients. */
interface RawIdentity {
  provider: string;
  user_id: string;
}

export interface RawAccount {
  user_id: string;
  identities: RawIdentity[];
}

/** An account at the provider, in the app's words: its own (primary) identity first. */
export interface ProviderAccount {
  accountId: string;
  identityIds: string[];
}

export const accountFromProvider = (raw: RawAccount): ProviderAccount => ({
  accountId: raw.user_id,
  identityIds: raw.identities.map((identity) => identityIdOf(identity.provider, identity.user_id)),
});

export interface ProviderCallContext {
  operationId: string;
  /** Every attempt carries its signal; retries stop when the next one would pass it. */
  deadline: Deadline;
  fence?: bigint;
  /** The generation the fence was issued in (sent as X-Fencing-Generation beside X-Fencing-Token). */
  generation?: bigint;
}

export type ProviderFailureKind = "http" | "network" | "deadline";

export class ProviderCallError extends Error {
  constructor(
    readonly kind: ProviderFailureKind,
    readonly status: number | null,
    message: string,
    /** From a 429's Retry-After header. */
    readonly retryAfterMs: number | null = null,
    /** Auth0's machine-readable error code, e.g. `identity_conflict`, `fenced_token`. */
    readonly errorCode: string | null = null,
  ) {
    super(message);
  }

  /**
   * Whether a write may have been applied although no answer said so: one of the call's attempts got no
   * HTTP answer (network error, abort at the deadline). Set by the call that gives up.
   */
  mayHaveLanded = false;

  /** How many requests the call sent before it gave up (its retries included). Set by the call that gives up. */
  attempts = 1;
}

/** Failures worth another attempt: the provider said "later" (429, 503) or never answered. */
const isRetryable = (error: ProviderCallError): boolean =>
  error.kind === "network" || error.status === 429 || error.status === 503;
const maxAttempts = 4;

/** Exponential backoff with jitter, never shorter than what the provider's Retry-After asked for. */
export function backoffMs(attempt: number, retryAfterMs: number | null, random: () => number = Math.random): number {
  const exponential = 100 * 2 ** (attempt - 1) * (0.5 + random() / 2);
  return Math.max(retryAfterMs ?? 0, Math.round(exponential));
}

/** A provider call: its method and JSON body; the context adds its headers. */
interface ProviderRequest {
  method: string;
  body?: unknown;
}

/** Headers added to each attempt as it is sent (the app's tell the simulated provider when: call-timing.ts). */
export type AttemptStamp = () => Record<string, string>;

function httpError(answer: JsonAnswer): ProviderCallError {
  const { message, errorCode } = (answer.payload ?? {}) as { message?: unknown; errorCode?: unknown };
  const seconds = Number(answer.headers["retry-after"]);
  return new ProviderCallError(
    "http",
    answer.status,
    typeof message === "string" ? message : answer.statusText,
    answer.headers["retry-after"] !== undefined && Number.isFinite(seconds) ? seconds * 1000 : null,
    typeof errorCode === "string" ? errorCode : null,
  );
}

/** One attempt: its answer's JSON, or the failure as a ProviderCallError of its kind. */
async function attempt<T>(
  url: string,
  request: ProviderRequest,
  context: ProviderCallContext,
  stamp: AttemptStamp,
): Promise<T> {
  const headers: Record<string, string> = { "X-Operation-Id": context.operationId, ...stamp() };
  if (context.fence !== undefined) headers["X-Fencing-Token"] = context.fence.toString();
  if (context.generation !== undefined) headers["X-Fencing-Generation"] = context.generation.toString();
  const signal = context.deadline.signal;
  let answer: JsonAnswer;
  try {
    answer = await requestJson(url, { ...request, headers, signal });
  } catch (error) {
    if (signal.aborted) throw new ProviderCallError("deadline", null, "aborted at the caller's deadline");
    throw new ProviderCallError("network", null, error instanceof Error ? error.message : String(error));
  }
  if (answer.status < 200 || answer.status > 299) throw httpError(answer);
  return answer.payload as T;
}

/** One logical call: retried with backoff while the failure is retryable and the deadline allows. */
async function call<T>(
  url: string,
  request: ProviderRequest,
  context: ProviderCallContext,
  stamp: AttemptStamp,
): Promise<T> {
  let unanswered = false;
  let attempts = 0;
  const givingUp = (error: ProviderCallError): ProviderCallError => {
    error.mayHaveLanded = unanswered;
    error.attempts = attempts;
    return error;
  };
  for (let number = 1; ; number++) {
    attempts = number;
    try {
      return await attempt<T>(url, request, context, stamp);
    } catch (error) {
      if (!(error instanceof ProviderCallError)) throw error;
      unanswered ||= error.status === null;
      if (!isRetryable(error) || number >= maxAttempts) throw givingUp(error);
      const waitMs = backoffMs(number, error.retryAfterMs);
      if (waitMs >= context.deadline.remainingMs()) {
        const reason = `gave up after ${number} attempt(s): the next would pass the deadline (${error.message})`;
        throw givingUp(new ProviderCallError("deadline", error.status, reason));
      }
      await sleep(waitMs, context.deadline.signal).catch(() => {
        throw givingUp(new ProviderCallError("deadline", error.status, "the deadline passed while waiting to retry"));
      });
    }
  }
}

/** The provider's Management API at `baseUrl`, each attempt stamped by `stamp`. */
export function identityProviderClient(baseUrl = config.identityProviderBaseUrl, stamp: AttemptStamp = () => ({})) {
  const send = <T>(method: string, path: string, context: ProviderCallContext, body?: unknown) =>
    call<T>(`${baseUrl}${path}`, { method, body }, context, stamp);
  const encode = encodeURIComponent;
  return {
    getAccount: async (accountId: string, context: ProviderCallContext): Promise<ProviderAccount> =>
      accountFromProvider(await send<RawAccount>("GET", `/api/v2/users/${encode(accountId)}`, context)),

    /** Unlinks `identityId` from the account `primaryId`; it becomes an account of its own. */
    unlinkIdentity: async (primaryId: string, identityId: string, context: ProviderCallContext): Promise<void> => {
      const { provider, providerUserId } = splitIdentityId(identityId);
      await send<RawIdentity[]>(
        "DELETE",
        `/api/v2/users/${encode(primaryId)}/identities/${encode(provider)}/${encode(providerUserId)}`,
        context,
      );
    },

    /** Sets the account's display name (a profile update: one call, nothing linked or unlinked). */
    renameAccount: async (accountId: string, name: string, context: ProviderCallContext): Promise<void> => {
      await send<RawAccount>("PATCH", `/api/v2/users/${encode(accountId)}`, context, { name });
    },

    /** Links the account `secondaryId` (and all linked under it) under the account `primaryId`. */
    linkAccount: async (primaryId: string, secondaryId: string, context: ProviderCallContext): Promise<void> => {
      const { provider, providerUserId } = splitIdentityId(secondaryId);
      await send<RawIdentity[]>("POST", `/api/v2/users/${encode(primaryId)}/identities`, context, {
        provider,
        user_id: providerUserId,
      });
    },
  };
}

export type IdentityProviderClient = ReturnType<typeof identityProviderClient>;
