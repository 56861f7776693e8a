/** The page's calls to the app's HTTP API, with problem+json errors as typed values. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  [extension: string]: unknown;
}

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.title);
  }
}

export async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(path, {
    ...init,
    headers: init.body ? { "Content-Type": "application/json", ...init.headers } : init.headers,
  });
  if (response.status === 204) return undefined as T;
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    throw new ApiError(body ?? { type: "about:blank", title: response.statusText, status: response.status, detail: "" });
  }
  return body as T;
}

export interface UserSummary {
  id: string;
  displayName: string;
}

export interface UserView extends UserSummary {
  primaryIdentityId: string;
  identities: { id: string; provider: string; providerUserId: string; label: string; isPrimary: boolean }[];
  lease: { held: boolean; expiresAt: string | null };
}

export type Strategy = "lease" | "none";

export interface LabSettings {
  strategy: Strategy;
  leaseTtlMs: number;
  clientGuard: boolean;
  provider: { latencyMs: number; jitterMs: number; failureRate: number };
}

export interface AuditReport {
  consistent: boolean;
  users: { userId: string; consistent: boolean; localPrimaryIdentityId: string; providerPrimaryIdentityId: string | null; violations: string[] }[];
}

export interface ProviderState {
  accounts: { user_id: string; identities: { provider: string; user_id: string }[] }[];
  calls: { at: string; method: string; path: string; status: number; operationId: string | null; durationMs: number }[];
}

export interface PromoteResult {
  primaryIdentityId: string;
  changed: boolean;
  operationId: string;
}

export const queryKeys = {
  session: ["session"] as const,
  users: ["users"] as const,
  user: (userId: string) => ["user", userId] as const,
  lab: ["lab"] as const,
  audit: ["audit"] as const,
  provider: ["provider"] as const,
};
