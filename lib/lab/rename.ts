/** The rename as the app runs it: the lab's settings decide whether the entity save maps the lock columns. */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import type { IdentityProviderClient } from "../provider/client";
import { renameUser, type RenameRequest } from "../switch/rename";
import type { UserView } from "../switch/users";
import { labSettings } from "./settings-snapshot";

export async function rename(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  request: RenameRequest,
): Promise<UserView> {
  const settings = await labSettings(db);
  return renameUser(db, provider, request, {
    lockColumnMapped: settings.lockColumnMapped,
    timeoutMs: settings.leaseTtlMs,
  });
}
