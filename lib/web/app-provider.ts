import { config } from "../core/config";
import { identityProviderClient } from "../provider/client";
import { sentAtStamp } from "../provider-sim/call-timing";

/**
 * The provider client the app's routes use, to the configured base URL; to the simulated provider, each call
 * stamped with when it was sent (call-timing.ts).
 */
export const appIdentityProvider = identityProviderClient(
  config.identityProviderBaseUrl,
  config.simulateProvider ? sentAtStamp : undefined,
);
