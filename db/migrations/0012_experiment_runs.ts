import { sql, type Kysely } from "kysely";

/**
 * Saved experiment runs: each run (or an imported one) as its record, so that `/learn/runs/{runId}`
 * reopens and replays it after the lab has moved on. A reset of the lab keeps them: they are the class's
 * prepared material, not the lab's state.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE experiment_runs (
      id uuid PRIMARY KEY,
      experiment_id text NOT NULL,
      started_at timestamptz NOT NULL,
      ended_at timestamptz NOT NULL,
      imported boolean NOT NULL DEFAULT false,
      record jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX experiment_runs_created_at ON experiment_runs (created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE experiment_runs`.execute(db);
}
