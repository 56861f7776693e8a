/**
 * The one experiment run at a time, across every app instance: a session-level advisory lock on a connection of
 * the run's own (runner.ts takes it), and in this process a mark beside it. Whoever would change the lab's settings
 * or state from outside the run asks first (`refuseWhileExperimentRuns`): the run's end puts back what it found, so
 * such a change would answer 200 and then be undone, and meanwhile change what the run measures.
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { LabHeldByExperiment } from "../core/problems";
import { processSingleton } from "../core/process-singleton";

export const runLockKey = "lease-lock-lab.experiments";

/**
 * A run in this process. The run lock lives in a database session, and a failover experiment kills the primary it
 * was taken on, the lock with it (measured: a second run sent 9 s into ha-failover-under-load ran beside it): here
 * the mark refuses all the same; across instances, the lock is all there is. One per process, not per bundle: the
 * experiments' route and the settings' route are bundled apart.
 */
export const runHere = processSingleton("ExperimentRunHere", () => ({ running: false }));

/**
 * Whether a run holds the lock, on any instance: the lock taken shared and given back in one statement (no session
 * keeps it, so a transaction pooler may send it anywhere), which fails while the run holds it exclusive.
 */
async function runLockHeld(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ held: boolean }>`
    SELECT CASE WHEN pg_try_advisory_lock_shared(hashtext(${runLockKey}))
                THEN NOT pg_advisory_unlock_shared(hashtext(${runLockKey}))
                ELSE true END AS held`.execute(db);
  return rows[0]!.held;
}

/**
 * A 409 `experiment-running` while a run goes on. A run that starts just after the check begins from the state the
 * change then leaves, or puts it back over the change: a window of one statement's round trip.
 */
export async function refuseWhileExperimentRuns(db: Kysely<Database>): Promise<void> {
  if (runHere.running || (await runLockHeld(db))) throw new LabHeldByExperiment();
}
