/** The app's only way to the simulated provider's lab endpoints: HTTP, like any other provider call. */
import { config } from "../core/config";
import { plainFetch } from "../core/plain-fetch";
import { accountFromProvider, type ProviderAccount, type RawAccount } from "../provider/client";

export interface ProviderCall {
  at: string;
  method: string;
  path: string;
  /** 0 when the provider gave no HTTP answer (network error, timeout). */
  status: number;
  /**
   * What the simulated provider did beyond the status: network-error, timeout, applied-late, client-closed
   * (its caller had gone when the provider was done with it; the status says what it did), fenced,
   * deadline-passed (not applied: past the deadline its own header gave).
   */
  outcome: string | null;
  operationId: string | null;
  durationMs: number;
}

/** The provider's state as its lab endpoint answers it (accounts in Auth0's shape), for `GET /api/lab/provider`. */
export interface ProviderState {
  accounts: RawAccount[];
  calls: ProviderCall[];
}

export async function fetchProviderState(): Promise<ProviderState> {
  const response = await plainFetch(`${config.identityProviderBaseUrl}/lab/state`);
  if (!response.ok) throw new Error(`the simulated provider answered ${response.status} to /lab/state`);
  return (await response.json()) as ProviderState;
}

/** The same state in the app's words, for the audit. */
export async function fetchProviderAccounts(): Promise<{ accounts: ProviderAccount[]; calls: ProviderCall[] }> {
  const state = await fetchProviderState();
  return { accounts: state.accounts.map(accountFromProvider), calls: state.calls };
}

export async function resetProvider(): Promise<void> {
  const response = await plainFetch(`${config.identityProviderBaseUrl}/lab/reset`, { method: "POST" });
  if (!response.ok) throw new Error(`the simulated provider answered ${response.status} to /lab/reset`);
}
