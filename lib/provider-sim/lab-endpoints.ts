/** The provider's lab-only endpoints (state, reset, knobs, health): neither delayed nor logged. */
import type { Kysely } from "kysely";
import { http, HttpResponse } from "msw";
import { seedProviderAccounts } from "../../db/seed-data";
import { recentCalls } from "./call-log";
import type { ChaosSource } from "./call-draw";
import type { ProviderHealth } from "./health";
import { resetDraws } from "./random-source";
import type { IdpDatabase } from "./schema";
import { listAccounts, resetProviderState } from "./store";

export const labEndpoints = (
  baseUrl: string,
  db: Kysely<IdpDatabase>,
  chaosSource: ChaosSource,
  health: ProviderHealth,
) => [
  http.get(`${baseUrl}/lab/state`, async () => {
    // The log first: a call it lists as done was applied before the accounts are read.
    const calls = await recentCalls(db);
    return HttpResponse.json({ accounts: await listAccounts(db), calls });
  }),
  http.post(`${baseUrl}/lab/reset`, async () => {
    await resetProviderState(db, seedProviderAccounts());
    await resetDraws(db);
    return new HttpResponse(null, { status: 204 });
  }),
  http.get(`${baseUrl}/lab/knobs`, async () => HttpResponse.json(await chaosSource.knobsAsHeard())),
  http.get(`${baseUrl}/lab/health`, () => HttpResponse.json(health)),
];
