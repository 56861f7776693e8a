import { raceToAcquire } from "./race";
import type { Experiment } from "./types";

export const simultaneousAcquire: Experiment = {
  id: "q2-simultaneous-acquire",
  title: "Fifty acquires at the same instant",
  question: "What if many requests try to take the lease at exactly the same moment?",
  failureMode: null,
  expected:
    "Exactly one UPDATE changes the row; the others wait on its row lock, " +
    "then re-check their WHERE against the committed row and match 0 rows, " +
    "all of them right after its commit.",
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
        ? [
            `${race.contenders} connections sent the acquiring UPDATE at once.`,
            `One found the row unlocked and updated it (fence ${race.rowBefore.fence} → ` +
              `${race.rowAfter.fence}). Its transaction stayed open ${race.commitHeldMs} ms to make the wait ` +
              `visible; it committed at ${race.winnerCommittedMs} ms.`,
            `Meanwhile ${race.waitingSessionsSeen} sessions were seen waiting for its row lock in pg_locks ` +
              `(${race.waitingSessions[0]?.wait_event_type ?? "?"}/${race.waitingSessions[0]?.wait_event ?? "?"}).`,
            "When it committed, each waiter re-checked its WHERE against the committed row (READ COMMITTED " +
              "re-checks an updated row), found an unexpired lease and updated 0 rows. " +
              `They answered between ${race.loserWaitMs.min} and ${race.loserWaitMs.max} ms, ` +
              "each committing at once as the app's autocommitted UPDATE does. " +
              "(A 0-row UPDATE that waited keeps the row lock until its own commit: " +
              "losers that kept their transactions open would queue one behind another.)",
            "No lock in Node and no retry: the database serialises the UPDATEs on one row, and the WHERE decides.",
          ].join(" ")
        : `Expected 1 acquiring UPDATE to take the row and the other ${race.contenders - 1} to match 0 ` +
          `rows, with sessions seen waiting on its row lock. Measured: ${race.rowsUpdated} took the row, ` +
          `${race.matchedZeroRows} matched 0 rows, and ${race.waitingSessionsSeen} waiting session(s) ` +
          "were seen. Run it again: on a busy machine the contenders may not all have met the row lock at " +
          "once.",
    };
  },
};
