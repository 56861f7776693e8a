import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  // For the optimistic strategy: every write of a user's fields bumps it.
  await sql`ALTER TABLE users ADD COLUMN version integer NOT NULL DEFAULT 0`.execute(db);
  // What the simulated provider did to a call beyond its status (network-error, timeout, applied-late, …).
  await sql`ALTER TABLE idp.calls ADD COLUMN outcome text NULL`.execute(db);
  // The seeded random source's position, shared by every app instance so that a run is repeatable.
  await sql`
    CREATE TABLE idp.random_state (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      seed integer NULL,
      draws bigint NOT NULL
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE idp.random_state`.execute(db);
  await sql`ALTER TABLE idp.calls DROP COLUMN outcome`.execute(db);
  await sql`ALTER TABLE users DROP COLUMN version`.execute(db);
}
