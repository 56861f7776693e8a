import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  // Until when a provider write of the operation may still land: while it runs, and after a call whose
  // answer was lost. No later holder may trust what it reads at the provider before then.
  await sql`ALTER TABLE switch_journal ADD COLUMN in_flight_until timestamptz NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE switch_journal DROP COLUMN in_flight_until`.execute(db);
}
