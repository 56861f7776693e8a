import { describe, it } from "vitest";
import { everyLeaseScheduleSettles, modelRuns, twoInstances } from "./harness/model-check";

// The faults that settle fast, so that many more schedules fit; beside model-check.test.ts, on its own pair.
const pair = twoInstances();

describe("model check: concurrent switches on two instances with a misbehaving provider", () => {
  it("under `lease`, many more schedules with the faults that settle fast: the same holds", async () => {
    await everyLeaseScheduleSettles(pair, "quick", modelRuns.quick);
  }, 900_000);
});
