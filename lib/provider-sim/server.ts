import { setupServer } from "msw/node";
import { createDb, kyselyOn } from "../../db/connection";
import type { Database } from "../../db/schema";
import { seedProviderAccounts } from "../../db/seed-data";
import { config } from "../core/config";
import type { ProviderEndpoint } from "../lab/settings-schema";
import { getLabSettings, takeScriptedOutcome } from "../lab/settings-store";
import { noteDelivery, sentAtHeader } from "./call-timing";
import { simulatedProviderHandlers } from "./handlers";
import type { IdpDatabase } from "./schema";
import { seedIfEmpty } from "./store";

interface Interception {
  server: ReturnType<typeof setupServer>;
  /** The global fetch as MSW patched it. */
  patchedFetch: typeof fetch;
}

const holder = globalThis as typeof globalThis & { __leaseLockLabProvider?: Interception };

/**
 * Intercepts this process's outgoing calls to the provider's base URL; everything else passes through.
 * The provider has a pool of its own, as a real one has its own database: the app exhausting its pool
 * must not stall the provider. It seeds its accounts when its tables are empty.
 */
export async function startSimulatedProvider(): Promise<void> {
  if (holder.__leaseLockLabProvider) return;
  const { db, pool } = createDb<IdpDatabase>(config.databaseUrl, 10);
  const labTables = kyselyOn<Database>(pool);
  const chaosSource = {
    settings: () => getLabSettings(labTables),
    takeScriptedOutcome: (endpoint: ProviderEndpoint) => takeScriptedOutcome(labTables, endpoint),
  };
  const server = setupServer(...simulatedProviderHandlers(config.identityProviderBaseUrl, db, chaosSource));
  server.listen({ onUnhandledRequest: "bypass" });
  holder.__leaseLockLabProvider = { server, patchedFetch: globalThis.fetch };
  await seedIfEmpty(db, seedProviderAccounts());
}

/**
 * Next.js's dev server puts its own global fetch back after a hot reload, silently removing MSW's
 * interception (and instrumentation does not run again): patch it again when that happened.
 */
function ensureIntercepting(): void {
  const interception = holder.__leaseLockLabProvider;
  if (!interception) return void startSimulatedProvider();
  if (globalThis.fetch === interception.patchedFetch) return;
  interception.server.close();
  interception.server.listen({ onUnhandledRequest: "bypass" });
  interception.patchedFetch = globalThis.fetch;
}

/**
 * The fetch the app reaches the provider with: through the simulator when it is on, each call stamped with
 * when it was sent, so the simulator can make the whole call last its latency (call-timing.ts).
 */
export const providerFetch: typeof fetch = async (input, init) => {
  if (!config.simulateProvider) return fetch(input, init);
  ensureIntercepting();
  const headers = new Headers(init?.headers);
  headers.set(sentAtHeader, String(performance.now()));
  const response = await fetch(input, { ...init, headers });
  noteDelivery(response);
  return response;
};
