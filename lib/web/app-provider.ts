import { config } from "../core/config";
import { identityProviderClient } from "../provider/client";
import { sentAtStamp } from "../provider-sim/call-timing";
import { tracedProvider } from "./provider-spans";

/**
 * The provider client the app's routes use, to the configured base URL; to the simulated provider, each call
 * stamped with when it was sent (call-timing.ts); each call in a span (provider-spans.ts: no-ops without an SDK).
 */
export const appIdentityProvider = tracedProvider(
  identityProviderClient(config.identityProviderBaseUrl, config.simulateProvider ? sentAtStamp : undefined),
);
