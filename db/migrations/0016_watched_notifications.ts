import { sql, type Kysely } from "kysely";

/**
 * The lab's notifications only while the lab is watched. A transaction that notifies commits under a
 * database-wide lock (PreCommit_Notify) held through its WAL flush, so its commit shares that flush with no
 * other: here 64 one-row UPDATEs at once on a pool of 16 took 0.34 ms of wall a commit with a NOTIFY and 0.14
 * without. Every lease change notified (`users_lease_notify`), so the lease's acquire and its save + release,
 * durable commits on the switch's path, queued behind one another's flushes whether or not a page watched, and
 * with the lab off: at K = 64 the app's lease took 1.12× `none` with it and 1.01× without (six paired rounds
 * each). Now the lease's, the lanes' and the events' triggers notify only while `lab_watch.until` is ahead,
 * which an instance keeps ahead while its stream has clients (lib/lab/watch-gate.ts). The provider's call
 * log keeps notifying: the provider's database may be another one, without this gate.
 *
 * The handshake, so that no change is neither notified nor in what an instance reads after opening the gate
 * (once it listens): a trigger takes a shared advisory lock before it reads the gate, and holds it to its
 * commit; an opening takes it exclusively, so it commits only after every writer that may have read the gate
 * closed has committed, and a writer that gets the lock after it reads the gate open (a new snapshot per
 * statement under READ COMMITTED, as every writer of these tables runs; a writer under a stricter isolation
 * always notifies). `opened_at` says when the gate last opened after being closed: an instance that finds it
 * moved since its own last write knows its stream may have missed a change (lib/lab/watch-gate.ts).
 */
const gateLock = sql.raw("1769, 16"); // (class, key): a pair no other advisory lock of the app uses.

const notifyLease = sql.raw(
  "PERFORM pg_notify('lab_stream', jsonb_build_object('kind', 'lease', 'data', lab_lease_json(NEW))::text);",
);
const notifyLane = sql.raw(`PERFORM pg_notify('lab_stream', jsonb_build_object(
        'kind', 'operation', 'operationId', NEW.operation_id, 'instance', NEW.instance)::text);`);
const notifyEvent =
  sql.raw(`PERFORM pg_notify('lab_stream', jsonb_build_object('kind', 'event', 'data', jsonb_build_object(
        'at', lab_iso(NEW.at), 'userId', NEW.user_id, 'operationId', NEW.operation_id, 'kind', NEW.kind,
        'message', left(NEW.message, 3000)))::text);`);

const triggerFunctions = { lab_notify_lease: notifyLease, lab_notify_lane: notifyLane, lab_notify_event: notifyEvent };

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE lab_watch (
      only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
      until timestamptz NOT NULL DEFAULT '-infinity',
      opened_at timestamptz NOT NULL DEFAULT '-infinity'
    )`.execute(db);
  await sql`INSERT INTO lab_watch DEFAULT VALUES`.execute(db);
  await sql`
    CREATE FUNCTION lab_watched() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      -- Its snapshot may predate an opening it waited for.
      IF current_setting('transaction_isolation') <> 'read committed' THEN
        RETURN true;
      END IF;
      PERFORM pg_advisory_xact_lock_shared(${gateLock});
      RETURN EXISTS (SELECT 1 FROM lab_watch WHERE until > clock_timestamp());
    END $$`.execute(db);
  for (const [name, notify] of Object.entries(triggerFunctions))
    await sql`
      CREATE OR REPLACE FUNCTION ${sql.raw(name)}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF lab_watched() THEN
          ${notify}
        END IF;
        RETURN NULL;
      END $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [name, notify] of Object.entries(triggerFunctions))
    await sql`
      CREATE OR REPLACE FUNCTION ${sql.raw(name)}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${notify}
        RETURN NULL;
      END $$`.execute(db);
  await sql`DROP FUNCTION lab_watched`.execute(db);
  await sql`DROP TABLE lab_watch`.execute(db);
}
