import { sql, type Kysely } from "kysely";
import type { Database } from "../../db/schema";

/** Grace's row as the seed has it, lease free: the starting point of the database tests that use her. */
export const resetGrace = (db: Kysely<Database>) =>
  sql`UPDATE users SET display_name = 'Grace Hopper', primary_identity_id = 'github|1906',
             identity_action_locked_at = NULL, identity_action_locked_until = NULL, identity_action_lock_token = NULL
       WHERE id = 'grace'`.execute(db);
