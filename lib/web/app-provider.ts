import { config } from "../core/config";
import { plainFetch } from "../core/plain-fetch";
import { identityProviderClient } from "../provider/client";
import { fetchStampingSentAt } from "../provider-sim/call-timing";

/**
 * The provider client the app's routes use: `fetch` without Next.js's data cache (kept-alive connections) to the configured base
 * URL; to the simulated provider, each call stamped with when it was sent (call-timing.ts).
 */
export const appIdentityProvider = identityProviderClient(
  config.identityProviderBaseUrl,
  config.simulateProvider ? fetchStampingSentAt : plainFetch,
);
