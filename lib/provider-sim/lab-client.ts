/** The app's only way to the simulated provider's lab endpoints: HTTP, like any other provider call. */
import { config } from "../core/config";
import { accountFromProvider, type ProviderAccount, type RawAccount } from "../provider/client";
import { requestJson } from "../provider/http-json";

export interface ProviderCall {
  /** The call log's row: a page that read the call with the list knows its streamed message. */
  id: string;
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
  const answer = await requestJson(`${config.identityProviderBaseUrl}/lab/state`, { method: "GET" });
  if (answer.status !== 200) throw new Error(`the simulated provider answered ${answer.status} to /lab/state`);
  return answer.payload as ProviderState;
}

/** The same state in the app's words, for the audit. */
export async function fetchProviderAccounts(): Promise<{ accounts: ProviderAccount[]; calls: ProviderCall[] }> {
  const state = await fetchProviderState();
  return { accounts: state.accounts.map(accountFromProvider), calls: state.calls };
}

export async function resetProvider(): Promise<void> {
  const answer = await requestJson(`${config.identityProviderBaseUrl}/lab/reset`, { method: "POST" });
  if (answer.status < 200 || answer.status > 299)
    throw new Error(`the simulated provider answered ${answer.status} to /lab/reset`);
}
