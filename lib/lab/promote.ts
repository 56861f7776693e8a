/** The switch as the app runs it: the lab's settings, read once per request, choose the guard. */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import type { IdentityProviderClient } from "../provider/client";
import {
  promoteToPrimary,
  promoteToPrimaryOnce,
  type PromoteRequest,
  type PromoteResult,
} from "../switch/switch-primary";
import { getLabSettings } from "./settings-store";
import { guardFor } from "./strategies";

export async function promote(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  request: PromoteRequest,
  idempotencyKey?: string,
): Promise<PromoteResult> {
  const settings = await getLabSettings(db);
  const guard = guardFor(db, settings);
  if (idempotencyKey === undefined) return promoteToPrimary(db, provider, guard, request);
  // A claim is stale once no lease its request could hold (renewals included) can still be alive.
  const staleAfterMs = 2 * 3 * settings.leaseTtlMs;
  return promoteToPrimaryOnce(db, provider, guard, { ...request, idempotencyKey, staleAfterMs });
}
