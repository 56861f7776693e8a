/** The app's only way to the simulated provider's lab endpoints: HTTP, like any other provider call. */
import { config } from "../config";
import type { ProviderAccount } from "../identity-provider";
import { providerFetch } from "./server";

export interface ProviderCall {
  at: string;
  method: string;
  path: string;
  /** 0 when the provider gave no HTTP answer (network error, timeout). */
  status: number;
  /** What the simulated provider did beyond the status: network-error, timeout, applied-late, client-closed. */
  outcome: string | null;
  operationId: string | null;
  durationMs: number;
}

export interface ProviderState {
  accounts: ProviderAccount[];
  calls: ProviderCall[];
}

export async function fetchProviderState(): Promise<ProviderState> {
  const response = await providerFetch(`${config.identityProviderBaseUrl}/lab/state`);
  if (!response.ok) throw new Error(`the simulated provider answered ${response.status} to /lab/state`);
  return (await response.json()) as ProviderState;
}

export async function resetProvider(): Promise<void> {
  const response = await providerFetch(`${config.identityProviderBaseUrl}/lab/reset`, { method: "POST" });
  if (!response.ok) throw new Error(`the simulated provider answered ${response.status} to /lab/reset`);
}
