/**
 * The simulated identity provider's routes, as MSW request handlers: Auth0-shaped Management API endpoints
 * over the `idp` schema (each call a `simulatedCall`: slowed and broken on purpose by the lab's settings,
 * and logged), plus four lab-only endpoints (state, reset, knobs, health). They answer real HTTP in the
 * provider's own process (server.ts).
 */
import type { Kysely } from "kysely";
import { http } from "msw";
import type { ChaosSource, EndpointName } from "./call-draw";
import type { ProviderHealth } from "./health";
import { labEndpoints } from "./lab-endpoints";
import { managementApi } from "./management-api";
import type { IdpDatabase } from "./schema";
import { providerCallContext, simulatedCall, type Perform } from "./simulated-call";

type RouteParams = Record<string, string | readonly string[] | undefined>;

export function simulatedProviderHandlers(
  baseUrl: string,
  db: Kysely<IdpDatabase>,
  chaosSource: ChaosSource,
  health: ProviderHealth,
) {
  const context = providerCallContext(db, chaosSource);
  const api = managementApi(db);
  const endpoint =
    (name: EndpointName, perform: Perform) =>
    ({ request, params }: { request: Request; params: RouteParams }) =>
      simulatedCall(context, name, request, decodeParams(params), perform);
  const users = `${baseUrl}/api/v2/users`;
  return [
    http.get(`${users}/:id`, endpoint("get", api.get)),
    http.delete(`${users}/:primaryId/identities/:provider/:userId`, endpoint("unlink", api.unlink)),
    http.post(`${users}/:primaryId/identities`, endpoint("link", api.link)),
    http.patch(`${users}/:id`, endpoint("rename", api.rename)),
    ...labEndpoints(baseUrl, db, chaosSource, health),
  ];
}

function decodeParams(params: RouteParams): Record<string, string> {
  return Object.fromEntries(Object.entries(params).map(([key, value]) => [key, decodeURIComponent(String(value))]));
}
