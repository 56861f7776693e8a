import { sql, type Kysely } from "kysely";

/**
 * A user's row inserted tells its lease too. A lab reset (and an experiment's sandbox put back) deletes the users
 * and inserts them again: their leases are then free, but only an UPDATE of the lease's columns notified, so a
 * page went on showing a lease left held before the reset (a crashed switch's "never released") until that user's
 * next acquire; the page holds leases from the stream alone. The row's lease is told at the inserting commit, so it
 * comes before any lease change after it. Gated as the UPDATE's is (`lab_notify_lease` asks `lab_watched()`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TRIGGER users_lease_notify_insert AFTER INSERT ON users FOR EACH ROW
      EXECUTE FUNCTION lab_notify_lease()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER users_lease_notify_insert ON users`.execute(db);
}
