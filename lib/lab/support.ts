/**
 * The lab's support tool: a second code path that sets a user's primary directly (the same provider calls
 * and save as the switch) without any lock. The lease does not stop it: a lock only protects the writers
 * that take it.
 */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import type { IdentityProviderClient } from "../provider/client";
import { promoteToPrimary, type PromoteRequest, type PromoteResult } from "../switch/switch-primary";
import { labSettings } from "./settings-snapshot";
import { noGuard } from "./strategies";

export async function supportSetPrimary(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  request: PromoteRequest,
): Promise<PromoteResult> {
  const settings = await labSettings(db);
  return promoteToPrimary(db, provider, noGuard(settings.leaseTtlMs), request);
}
