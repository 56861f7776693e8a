import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  // The intent of each lease-guarded switch and the step it reached, so the next lease holder can
  // finish or undo a switch that a crash, a timeout or a late answer left half-done.
  await sql`
    CREATE TABLE switch_journal (
      id bigserial PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      operation_id uuid NOT NULL,
      fence bigint NOT NULL,
      from_identity_id text NOT NULL,
      to_identity_id text NOT NULL,
      step text NOT NULL,
      ended_with text NULL,
      resolved_by uuid NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX switch_journal_open ON switch_journal (user_id, id) WHERE step NOT IN ('done', 'resolved')`.execute(
    db,
  );

  // What happened, in words, for the page: take-overs, recoveries, fenced calls, failed releases.
  await sql`
    CREATE TABLE operation_events (
      id bigserial PRIMARY KEY,
      at timestamptz NOT NULL DEFAULT now(),
      user_id text NOT NULL,
      operation_id uuid NULL,
      kind text NOT NULL,
      message text NOT NULL
    )`.execute(db);

  await sql`
    CREATE TABLE idempotency_records (
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      key text NOT NULL,
      request_hash text NOT NULL,
      operation_id uuid NOT NULL,
      status integer NULL,
      body jsonb NULL,
      headers jsonb NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (user_id, key)
    )`.execute(db);

  // The simulated provider's memory of the highest fencing token seen per account.
  await sql`CREATE TABLE idp.fences (account_user_id text PRIMARY KEY, fence bigint NOT NULL)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE idp.fences, idempotency_records, operation_events, switch_journal`.execute(db);
}
