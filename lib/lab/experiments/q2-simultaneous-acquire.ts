import { raceToAcquire } from "./race";
import type { Experiment } from "./types";

export const simultaneousAcquire: Experiment = {
  id: "q2-simultaneous-acquire",
  title: "Fifty acquires at the same instant",
  question: "What if many requests try to take the lease at exactly the same moment?",
  failureMode: null,
  expected:
    "Exactly one UPDATE changes the row; the others wait on its row lock, then re-check their WHERE against the committed row and match 0 rows.",
  tryNext: "Fire a burst of 50 on the main page under `lease`: one 200, the rest 409, the audit consistent.",
  async run(lab) {
    await lab.fresh({});
    const race = await raceToAcquire(lab, 50, 300);
    const asExpected =
      race.rowsUpdated === 1 && race.matchedZeroRows === race.contenders - 1 && race.waitingSessionsSeen > 0;
    return {
      observed: race,
      asExpected,
      explanation: asExpected
        ? `${race.contenders} connections sent the acquiring UPDATE at once. One found the row unlocked and updated it (fence ${race.rowBefore.fence} → ${race.rowAfter.fence}), taking the row lock until its commit, held ${race.commitHeldMs} ms here to make it visible. While it held it, ${race.waitingSessionsSeen} sessions were seen waiting in pg_locks (${race.waitingSessions[0]?.wait_event_type ?? "?"}/${race.waitingSessions[0]?.wait_event ?? "?"}). When it committed, each waiter re-evaluated its WHERE against the newly committed row (READ COMMITTED re-checks an updated row), found an unexpired lease and updated 0 rows, answering after ${race.loserWaitMs.min}–${race.loserWaitMs.max} ms. No lock in Node, no retry: the database serializes the UPDATEs on one row, and the WHERE decides.`
        : `Expected 1 row updated and ${race.contenders - 1} matching 0 rows with waiters seen; measured ${race.rowsUpdated} updated, ${race.matchedZeroRows} matched 0, ${race.waitingSessionsSeen} waiting seen.`,
    };
  },
};
