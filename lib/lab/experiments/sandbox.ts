/**
 * An experiment's sandbox: the lab's whole state (the app's rows, the simulated provider's rows, the
 * settings) read before the run and put back after it, so that the main page carries on exactly where
 * it was, with neither the run's settings nor the damage it did on purpose.
 */
import { setTimeout as pause } from "node:timers/promises";
import { sql, type Kysely, type Transaction } from "kysely";
import { createDb } from "../../../db/connection";
import type { Database } from "../../../db/schema";
import { config } from "../../core/config";
import { processSingleton } from "../../core/process-singleton";
import { lockForReset } from "../../../db/seed";
import { applyAnnounced } from "../settings";
import { readLabSettings, publishLabSettings } from "../settings-store";
import { announceReset } from "../stream";

/** Every table a run can change, parents before children (restored in this order, emptied in reverse). */
const labTables = [
  "users",
  "identities",
  "lab_settings",
  "switch_journal",
  "operation_events",
  "idempotency_records",
  "operation_lanes",
] as const;
/** The simulated provider's: in the lab's database, or in its own (`PROVIDER_DATABASE_URL`, the replicated shapes). */
const providerTables = ["idp.accounts", "idp.identities", "idp.calls", "idp.fences", "idp.random_state"] as const;
type Table = (typeof labTables)[number] | (typeof providerTables)[number];

export interface LabState {
  rows: Record<Table, unknown[]>;
  settings: Awaited<ReturnType<typeof readLabSettings>>;
}

/** Where the provider's tables are: its own database when it has one, else the lab's. */
const providerDb = (db: Kysely<Database>): Kysely<Database> =>
  config.providerDatabaseUrl
    ? processSingleton("ProviderStateDb", () => createDb(config.providerDatabaseUrl, 2).db)
    : db;

/** One snapshot of `tables` (a reset on another instance cannot be half in it). */
async function readTables(db: Kysely<Database>, tables: readonly Table[]) {
  return db.transaction().execute(async (trx) => {
    await sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`.execute(trx);
    const rows = {} as Partial<LabState["rows"]>;
    for (const table of tables) {
      const { rows: found } = await sql<{ rows: unknown[] }>`
        SELECT coalesce(jsonb_agg(to_jsonb(t)), '[]') AS rows FROM ${sql.table(table)} t`.execute(trx);
      rows[table] = found[0]!.rows;
    }
    return { rows, settings: await readLabSettings(trx) };
  });
}

async function writeTables(trx: Transaction<Database>, tables: readonly Table[], state: LabState): Promise<void> {
  for (const table of [...tables].reverse()) await sql`DELETE FROM ${sql.table(table)}`.execute(trx);
  for (const table of tables) {
    if (state.rows[table].length === 0) continue;
    await sql`
      INSERT INTO ${sql.table(table)}
      SELECT * FROM jsonb_populate_recordset(NULL::${sql.table(table)}, ${JSON.stringify(state.rows[table])}::jsonb)`.execute(
      trx,
    );
  }
}

export async function saveLabState(db: Kysely<Database>): Promise<LabState> {
  const separate = providerDb(db) !== db;
  const lab = await readTables(db, separate ? labTables : [...labTables, ...providerTables]);
  const provider = separate ? (await readTables(providerDb(db), providerTables)).rows : {};
  return { rows: { ...lab.rows, ...provider } as LabState["rows"], settings: lab.settings };
}

/** Provider calls of the run may land until their journal's bound; the state goes back once none can. */
const longestWaitForLateCallsMs = 15_000;

export async function restoreLabState(db: Kysely<Database>, state: LabState): Promise<void> {
  const { rows } = await sql<{ wait_ms: number | null }>`
    SELECT extract(epoch FROM max(in_flight_until) - clock_timestamp()) * 1000 AS wait_ms
      FROM switch_journal WHERE in_flight_until IS NOT NULL`.execute(db);
  const waitMs = Number(rows[0]?.wait_ms ?? 0);
  if (waitMs > 0) await pause(Math.min(waitMs, longestWaitForLateCallsMs));
  const separate = providerDb(db) !== db;
  if (separate)
    await providerDb(db)
      .transaction()
      .execute((trx) => writeTables(trx, providerTables, state));
  const announced = await db.transaction().execute(async (trx) => {
    await lockForReset(trx);
    await writeTables(trx, separate ? labTables : [...labTables, ...providerTables], state);
    // Announced in the transaction that wrote the row, so a change committed meanwhile is ordered with it.
    return publishLabSettings(trx, state.settings);
  });
  await applyAnnounced(announced);
  await announceReset(db);
}
