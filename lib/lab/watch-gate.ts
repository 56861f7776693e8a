/**
 * The database's gate for the lab's notifications (migrations 0016 and 0019): the lease's, the lanes', the events'
 * and the provider's call log's triggers notify only while `lab_watch.until` is ahead, so that with no page
 * watching, the commits on the switch's path (the lease's, the provider's log of its calls) take no
 * database-wide notification lock. An instance whose stream has clients holds it
 * open: once before a client's catch-up is read, then every `holdEveryMs` while it has any (stream.ts), taking
 * the gate's lock only to open it, or when it would close within `extendWithinSeconds`.
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { processSingleton } from "../core/process-singleton";

/** The gate's advisory lock (class, key), as the triggers take it: a pair no other lock of the app uses. */
const gateLock = { classid: 1769, objid: 16 };

/**
 * A condition on `pg_locks` row `row`: not the gate's lock, which every lease change, lane, event and provider call
 * holds from its trigger to its commit, for the experiments and tests that count the advisory locks a switch leaves.
 */
export const notTheGatesLock = (row: string) =>
  `NOT (${row}.locktype = 'advisory' AND ${row}.classid = ${gateLock.classid} AND ${row}.objid = ${gateLock.objid} ` +
  `AND ${row}.objsubid = 2)`;

/** How far ahead each write puts the gate's closing, and how often an instance with clients writes. */
const openForSeconds = 30;
export const holdEveryMs = 5_000;
/**
 * A gate open more than this much longer is kept open without its lock: it does not close before the write commits
 * (one answered later than this less 2 s counts as a gap).
 */
const extendWithinSeconds = 10;
/** How long an opening waits for the writers before it: past it, it fails, and the client is told so. */
const openingWaitMs = 2_000;

const gate = processSingleton("WatchGate", () => ({
  /** `opened_at` as this instance's last write read it: an opening since then was a moment without notifications. */
  openedAt: null as string | null,
  /** This process's clock until which its last write keeps the gate open (less a second of margin). */
  openUntilMs: 0,
}));

/**
 * Opens the gate or keeps it open. True when the gate may have been closed at some moment since this instance's
 * last write (or this is its first): what it heard before then is not a complete account.
 */
export async function holdGateOpen(db: Kysely<Database>): Promise<boolean> {
  const started = Date.now();
  const extended = await extendOpenGate(db);
  // An extension answered this late may have committed after the gate closed, unseen: counted as a gap.
  const late = extended !== null && Date.now() - started >= (extendWithinSeconds - 2) * 1_000;
  const openedAt = extended ?? (await openGate(db));
  gate.openUntilMs = started + (openForSeconds - 1) * 1_000;
  const missed = late || gate.openedAt !== openedAt;
  gate.openedAt = openedAt;
  return missed;
}

/** Whether the gate may have closed since this instance's last write (a write failing since, or none yet). */
export const gateMayHaveClosed = (): boolean => Date.now() >= gate.openUntilMs;

/**
 * A gate open for a while yet is kept open by a plain write: no writer can read it closed before this commits,
 * so none is waited for (and the triggers are never made to queue behind the lock every few seconds).
 * Null when it is closed or about to close.
 */
async function extendOpenGate(db: Kysely<Database>): Promise<string | null> {
  const { rows } = await sql<{ opened_at: string }>`
    UPDATE lab_watch SET until = greatest(until, clock_timestamp() + make_interval(secs => ${openForSeconds}))
     WHERE until > clock_timestamp() + make_interval(secs => ${extendWithinSeconds})
    RETURNING opened_at::text`.execute(db);
  return rows[0]?.opened_at ?? null;
}

/**
 * Opens the gate under its advisory lock taken exclusively: this commits only after every write that read the
 * gate closed has committed, so whatever is read after it saw each of them, and every later change notifies.
 * `opened_at` moves only when this write finds the gate closed.
 */
async function openGate(db: Kysely<Database>): Promise<string> {
  return db.transaction().execute(async (trx) => {
    // The triggers queue behind a waiting opening: a writer holding its transaction long is not waited for long.
    await sql`SET LOCAL lock_timeout = ${sql.lit(`${openingWaitMs}ms`)}`.execute(trx);
    const { rows } = await sql<{ opened_at: string }>`
      WITH locked AS (SELECT pg_advisory_xact_lock(${sql.lit(gateLock.classid)}, ${sql.lit(gateLock.objid)}))
      UPDATE lab_watch
         SET opened_at = CASE WHEN until > clock_timestamp() THEN opened_at ELSE clock_timestamp() END,
             until = greatest(until, clock_timestamp() + make_interval(secs => ${openForSeconds}))
        FROM locked
      RETURNING opened_at::text`.execute(trx);
    return rows[0]!.opened_at;
  });
}

/** A connection to a database whose only listener is a relay (a simulated provider's own database). */
interface RelayConnection {
  query(text: string): Promise<unknown>;
}

/**
 * Such a database's gate, held open for good while its relay runs (no instance of the lab opens it there), then
 * closed. No handshake: nothing reads a catch-up there.
 */
export const relayedGate = {
  open: (connection: RelayConnection) => connection.query("UPDATE lab_watch SET until = 'infinity'"),
  close: (connection: RelayConnection) => connection.query("UPDATE lab_watch SET until = '-infinity'"),
};
