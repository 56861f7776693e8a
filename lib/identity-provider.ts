/**
 * The typed client for the identity provider's Management API (Auth0-shaped). Every call carries the
 * operation's id (and its fencing token, when it has one) and the caller's AbortSignal, so a call can
 * never outlive the deadline its caller set.
 */
import { config } from "./config";

export interface ProviderIdentity {
  provider: string;
  user_id: string;
  isSocial: boolean;
}

export interface ProviderAccount {
  user_id: string;
  identities: ProviderIdentity[];
}

export interface ProviderCallContext {
  operationId: string;
  signal: AbortSignal;
  fence?: bigint;
}

export type ProviderFailureKind = "http" | "network" | "deadline";

export class ProviderCallError extends Error {
  constructor(
    readonly kind: ProviderFailureKind,
    readonly status: number | null,
    message: string,
    /** From a 429's Retry-After header. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }
}

/** Splits `"github|8812"` into the provider and its user id (the id itself may contain more `|`). */
export function splitIdentityId(identityId: string): { provider: string; user_id: string } {
  const bar = identityId.indexOf("|");
  return { provider: identityId.slice(0, bar), user_id: identityId.slice(bar + 1) };
}

export function identityProviderClient(baseUrl = config.identityProviderBaseUrl) {
  async function call<T>(method: string, path: string, context: ProviderCallContext, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { "X-Operation-Id": context.operationId };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (context.fence !== undefined) headers["X-Fencing-Token"] = context.fence.toString();
    try {
      // Looked up at call time, so the simulated provider's interception (MSW) is always in the path.
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: context.signal,
      });
      const payload: unknown = await response.json().catch(() => null);
      if (!response.ok) {
        const message = (payload as { message?: unknown } | null)?.message;
        throw new ProviderCallError("http", response.status, typeof message === "string" ? message : response.statusText, retryAfterMs(response));
      }
      return payload as T;
    } catch (error) {
      if (error instanceof ProviderCallError) throw error;
      if (context.signal.aborted) throw new ProviderCallError("deadline", null, "aborted at the caller's deadline");
      throw new ProviderCallError("network", null, error instanceof Error ? error.message : String(error));
    }
  }

  const encode = encodeURIComponent;
  return {
    getUser: (accountId: string, context: ProviderCallContext) => call<ProviderAccount>("GET", `/api/v2/users/${encode(accountId)}`, context),

    /** Unlinks `identityId` from the account `primaryId`; it becomes an account of its own. */
    unlinkIdentity: (primaryId: string, identityId: string, context: ProviderCallContext) => {
      const { provider, user_id } = splitIdentityId(identityId);
      return call<ProviderIdentity[]>("DELETE", `/api/v2/users/${encode(primaryId)}/identities/${encode(provider)}/${encode(user_id)}`, context);
    },

    /** Links the account `secondaryId` (and all linked under it) under the account `primaryId`. */
    linkAccount: (primaryId: string, secondaryId: string, context: ProviderCallContext) =>
      call<ProviderIdentity[]>("POST", `/api/v2/users/${encode(primaryId)}/identities`, context, splitIdentityId(secondaryId)),
  };
}

export type IdentityProviderClient = ReturnType<typeof identityProviderClient>;

function retryAfterMs(response: Response): number | null {
  const seconds = Number(response.headers.get("Retry-After"));
  return response.headers.has("Retry-After") && Number.isFinite(seconds) ? seconds * 1000 : null;
}
