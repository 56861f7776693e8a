/**
 * The one experiment run at a time, across every app instance: a session-level advisory lock on a connection of
 * the run's own (runner.ts takes it), and in this process a mark beside it. A change of the lab's settings or state
 * from outside a run (`PUT /api/lab`, a reset) is made under the same lock, shared (`outsideExperimentRuns`): the
 * run's end puts back what it found, so a change made during a run would answer 200 and then be undone, and
 * meanwhile change what the run measures.
 */
import { sql } from "kysely";
import { ExperimentRunning } from "../core/problems";
import { processSingleton } from "../core/process-singleton";
import { createDb } from "../../db/connection";
import { config } from "../core/config";

export const runLockKey = "lease-lock-lab.experiments";

/**
 * A run in this process. The run lock lives in a database session, and a failover experiment kills the primary it
 * was taken on, the lock with it (measured: a second run sent 9 s into ha-failover-under-load ran beside it): here
 * the mark refuses all the same; across instances, the lock is all there is. One per process, not per bundle: the
 * experiments' route and the settings' route are bundled apart.
 */
export const runHere = processSingleton("ExperimentRunHere", () => ({ running: false }));

/** Direct, as the run's lock is: a transaction pooler would do too, but the lab's other pools go straight there. */
const changesDb = () =>
  processSingleton("LabChangesDb", () => createDb(config.directDatabaseUrl, 2, { applicationName: "lab:changes" }).db);

const whileRunning =
  "The lab's settings and state are the experiment's until it ends, and then put back as they were before it: a " +
  "change now would be undone, and would change what the experiment measures. Try again when it ends.";

/**
 * Makes `change` unless an experiment runs (409 `experiment-running`), holding the run lock shared until it has
 * ended, so that no run starts in its middle (the runner's `pg_try_advisory_lock` fails meanwhile). The lock is a
 * transaction's, released with it whatever happens, on a pool of its own: `change` makes its statements on the
 * app's, which a transaction held there could leave without a connection (a pool of one), and a settings change
 * waits up to 2 s for the peers, which the instruments' pool must not (the lanes are written there).
 */
export async function outsideExperimentRuns<T>(change: () => Promise<T>, lockDb = changesDb()): Promise<T> {
  if (runHere.running) throw new ExperimentRunning(whileRunning);
  return lockDb.transaction().execute(async (trx) => {
    const { rows } = await sql<{ taken: boolean }>`
        SELECT pg_try_advisory_xact_lock_shared(hashtext(${runLockKey})) AS taken`.execute(trx);
    if (!rows[0]!.taken) throw new ExperimentRunning(whileRunning);
    return change();
  });
}
