import { setupServer } from "msw/node";
import { appDb } from "../db";
import { config } from "../config";
import { simulatedProviderHandlers } from "./handlers";

const holder = globalThis as typeof globalThis & { __leaseLockLabProvider?: ReturnType<typeof setupServer> };

/** Intercepts this process's outgoing calls to the provider's base URL; everything else passes through. */
export function startSimulatedProvider(): void {
  if (holder.__leaseLockLabProvider) return;
  const server = setupServer(...simulatedProviderHandlers(config.identityProviderBaseUrl, appDb));
  server.listen({ onUnhandledRequest: "bypass" });
  holder.__leaseLockLabProvider = server;
}
