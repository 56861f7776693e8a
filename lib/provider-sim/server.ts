import { setupServer } from "msw/node";
import { createDb } from "../../db/connection";
import { config } from "../config";
import { simulatedProviderHandlers } from "./handlers";

const holder = globalThis as typeof globalThis & { __leaseLockLabProvider?: ReturnType<typeof setupServer> };

/**
 * Intercepts this process's outgoing calls to the provider's base URL; everything else passes through.
 * The provider has a pool of its own, as a real one has its own database: the app exhausting its pool
 * must not stall the provider.
 */
export function startSimulatedProvider(): void {
  if (holder.__leaseLockLabProvider) return;
  const { db } = createDb(config.databaseUrl, 10);
  const server = setupServer(...simulatedProviderHandlers(config.identityProviderBaseUrl, db));
  server.listen({ onUnhandledRequest: "bypass" });
  holder.__leaseLockLabProvider = server;
}
