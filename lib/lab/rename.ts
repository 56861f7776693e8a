/** The rename as the lab runs it: the settings decide whether its entity maps the lock columns (the wrong save). */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import type { IdentityProviderClient } from "../provider/client";
import { renameUser, userName, type RenameRequest } from "../switch/rename";
import { mappedEntity } from "./interceptors/mapped-entity";
import type { UserView } from "../switch/user-view";
import { labSettings } from "./settings-snapshot";

export async function rename(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  request: RenameRequest,
): Promise<UserView> {
  const settings = await labSettings(db);
  return settings.lockColumnMapped
    ? renameUser(db, provider, request, settings.leaseTtlMs, mappedEntity)
    : renameUser(db, provider, request, settings.leaseTtlMs, userName);
}
