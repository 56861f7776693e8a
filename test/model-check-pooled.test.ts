import { describe, it } from "vitest";
import { everyLeaseScheduleSettles, modelRuns, twoInstances } from "./harness/model-check";

// The quick schedules on two instances, one direct and one whose pool goes through PgBouncer in transaction
// pooling: the lease needs nothing a transaction pooler breaks (no session state, no named statements).
const pair = twoInstances({ throughPgBouncer: true });

describe("model check: one of the two instances behind PgBouncer (transaction pooling)", () => {
  it("under `lease`, every schedule settles: allowed answers only, no lease stuck, a consistent audit", async () => {
    await everyLeaseScheduleSettles(pair, "quick", modelRuns.pooled);
  }, 900_000);
});
