import { raceToAcquire } from "./race";
import type { Experiment } from "./types";

export const raceToAcquireTwo: Experiment = {
  id: "f4-race-to-acquire",
  title: "A double click and two tabs, as the database sees them",
  question: "Two requests acquire at once: who wins, and what does the loser see?",
  failureMode: "Race to acquire: two holders if acquire were a read then a write",
  expected: "Two UPDATEs: one commits first; the other waits, re-evaluates its WHERE and updates 0 rows.",
  tryNext: "Double-click Make primary on the main page (client guard off): one 200, one 409 with Retry-After.",
  async run(lab) {
    await lab.fresh({});
    const race = await raceToAcquire(lab, 2, 300);
    const asExpected = race.rowsUpdated === 1 && race.matchedZeroRows === 1 && race.waitingSessionsSeen === 1;
    return {
      observed: race,
      asExpected,
      explanation: asExpected
        ? "Both UPDATEs reached the row together. The first took its row lock and updated it (fence " +
          `${race.rowBefore.fence} → ${race.rowAfter.fence}); the second was seen waiting for that lock ` +
          `in pg_locks. Once the first committed (after ${race.commitHeldMs} ms here), ` +
          "the second re-evaluated its WHERE on the committed row, where the lease was now unexpired, " +
          `and updated 0 rows: it answered after ${race.loserWaitMs.max} ms with "held". ` +
          "A SELECT then UPDATE would have let both see a free lease; one conditional UPDATE cannot."
        : "Expected 1 acquiring UPDATE to take the row, the other to match 0 rows, " +
          `and 1 session seen waiting on the row lock. Measured: ${race.rowsUpdated} took the row, ` +
          `${race.matchedZeroRows} matched 0 rows, and ${race.waitingSessionsSeen} waiting session(s) ` +
          "were seen.",
    };
  },
};
