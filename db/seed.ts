import { sql, type Kysely, type Transaction } from "kysely";
import type { Database } from "./schema";
import { identityId, seedUsers, type SeedUser } from "./seed-data";

/**
 * Taken first by every transaction that replaces seeded state wholesale (this one and the simulated
 * provider's reset): two resets at once (one per app instance) would each delete what the other had
 * not yet committed and insert on top of the other's rows, failing on a key. One at a time, they cannot.
 */
export async function lockForReset<DB>(trx: Transaction<DB>): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext('lease-lock-lab.reset'))`.execute(trx);
}

/**
 * Puts the app's users and identities back to the demo seed; leases, journals, idempotency records,
 * events, timeline lanes and lab settings go with them.
 */
export async function seedAppData(db: Kysely<Database>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockForReset(trx);
    await trx.deleteFrom("identities").execute();
    await trx.deleteFrom("users").execute();
    await trx.deleteFrom("lab_settings").execute();
    await trx.deleteFrom("operation_events").execute();
    await trx.deleteFrom("operation_lanes").execute();
    await insertUsers(trx, seedUsers);
  });
}

/** Adds `users` and their identities (the first one primary) to the app's tables. */
export async function insertUsers(db: Kysely<Database>, users: SeedUser[]): Promise<void> {
  await db
    .insertInto("users")
    .values(
      users.map((user) => ({
        id: user.id,
        display_name: user.displayName,
        primary_identity_id: identityId(user.identities[0]!),
      })),
    )
    .execute();
  await db
    .insertInto("identities")
    .values(
      users.flatMap((user) =>
        user.identities.map((identity, position) => ({
          id: identityId(identity),
          user_id: user.id,
          provider: identity.provider,
          provider_user_id: identity.providerUserId,
          label: identity.label,
          position,
        })),
      ),
    )
    .execute();
}

/** A fresh database gets the demo users (the simulated provider seeds its own accounts when it starts). */
export async function seedIfEmpty(db: Kysely<Database>): Promise<boolean> {
  const anyUser = await db.selectFrom("users").select("id").limit(1).executeTakeFirst();
  if (anyUser) return false;
  await seedAppData(db);
  return true;
}
