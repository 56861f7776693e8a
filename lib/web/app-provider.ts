import { config } from "../core/config";
import { identityProviderClient } from "../provider/client";
import { providerFetch } from "../provider-sim/server";

/** The provider client the app's routes use: configured base URL, the simulator kept in the path. */
export const appIdentityProvider = identityProviderClient(config.identityProviderBaseUrl, providerFetch);
