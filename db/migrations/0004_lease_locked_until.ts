import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  // The expiry the holder chose, stored at acquisition: a TTL changed later, or read by another instance
  // with other settings, can no longer shorten or lengthen a lease that is already held.
  await sql`ALTER TABLE users ADD COLUMN identity_action_locked_until timestamptz NULL`.execute(db);
  // Leases held across the upgrade get the expiry the app computed then, with the default TTL of 10 s.
  await sql`
    UPDATE users SET identity_action_locked_until = identity_action_locked_at + interval '10 seconds'
     WHERE identity_action_locked_at IS NOT NULL`.execute(db);
  await sql`ALTER TABLE users ADD CONSTRAINT identity_action_lease_whole
    CHECK ((identity_action_locked_at IS NULL) = (identity_action_locked_until IS NULL))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE users DROP CONSTRAINT identity_action_lease_whole`.execute(db);
  await sql`ALTER TABLE users DROP COLUMN identity_action_locked_until`.execute(db);
}
