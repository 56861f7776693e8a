/**
 * The lab's instruments (the timeline's recording, the event stream's reads) use a small pool of their
 * own: the lesson of `transaction` and `advisory` is an exhausted app pool, and the instruments must keep
 * showing it rather than queue behind it.
 *
 * Its commits do not wait for the disk (`synchronous_commit = off`): the lanes are the lab's picture of
 * the operations, not the product's data, and a PostgreSQL crash loses at most the last 0.6 s of them
 * (3 × wal_writer_delay). A request's answer waits for its lane's write, and that wait no longer includes
 * a WAL flush (measured apart from the bench: 16 switches at once answered about 20 ms sooner). That is a
 * session setting, sent at connection: so the instruments connect straight to PostgreSQL, never through
 * a transaction pooler (which refuses such startup parameters and keeps no session settings).
 */
import type { Kysely } from "kysely";
import { createDb } from "../../db/connection";
import type { Database } from "../../db/schema";
import { config } from "../core/config";
import { processSingleton } from "../core/process-singleton";

/** How the instruments' sessions are named in `pg_stat_activity`. */
const instrumentsApplicationName = "lab:instruments";

export function instrumentDb(): Kysely<Database> {
  return processSingleton(
    "InstrumentDb",
    () =>
      createDb(config.directDatabaseUrl, 3, { synchronousCommit: false, applicationName: instrumentsApplicationName })
        .db,
  );
}
