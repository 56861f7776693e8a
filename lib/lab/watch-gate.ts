/**
 * The database's gate for the lab's notifications (migration 0016): the lease's, the lanes' and the events'
 * triggers notify only while `lab_watch.until` is ahead, so that with no page watching, the lease's commits
 * on the switch's path take no database-wide notification lock. An instance whose stream has clients holds it
 * open: once before a client's catch-up is read, then every `holdEveryMs` while it has any (stream.ts).
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { processSingleton } from "../core/process-singleton";

/** The gate's advisory lock (class, key), as the triggers take it: a pair no other lock of the app uses. */
const gateLock = { classid: 1769, objid: 16 };

/**
 * A condition on `pg_locks` row `row`: not the gate's lock, which every lease change and lane write holds for a
 * moment, for the experiments and tests that count the advisory locks a switch leaves.
 */
export const notTheGatesLock = (row: string) =>
  `NOT (${row}.locktype = 'advisory' AND ${row}.classid = ${gateLock.classid} AND ${row}.objid = ${gateLock.objid} ` +
  `AND ${row}.objsubid = 2)`;

/** How far ahead each write puts the gate's closing, and how often an instance with clients writes. */
const openForSeconds = 30;
export const holdEveryMs = 5_000;

/** `opened_at` as this instance's last write read it: an opening since then was a moment without notifications. */
const gate = processSingleton("WatchGate", () => ({ openedAt: null as string | null }));

/**
 * Opens the gate or keeps it open, under the gate's advisory lock taken exclusively: this commits only after
 * every write that read the gate closed has committed, so whatever is read after it saw each of them, and every
 * later change notifies. True when the gate may have been closed at some moment since this instance's last
 * write (or this is its first): what it heard before then is not a complete account.
 */
export async function holdGateOpen(db: Kysely<Database>): Promise<boolean> {
  // `opened_at` moves only when this write finds the gate closed; `until` only forward.
  const { rows } = await sql<{ opened_at: string }>`
    WITH locked AS (SELECT pg_advisory_xact_lock(${sql.lit(gateLock.classid)}, ${sql.lit(gateLock.objid)}))
    UPDATE lab_watch
       SET opened_at = CASE WHEN until > clock_timestamp() THEN opened_at ELSE clock_timestamp() END,
           until = greatest(until, clock_timestamp() + make_interval(secs => ${openForSeconds}))
      FROM locked
    RETURNING opened_at::text`.execute(db);
  const openedAt = rows[0]!.opened_at;
  const missed = gate.openedAt !== openedAt;
  gate.openedAt = openedAt;
  return missed;
}
