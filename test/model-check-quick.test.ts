import fc from "fast-check";
import { describe, it } from "vitest";
import { modelProperty, modelRuns, modelSeed, twoInstances } from "./harness/model-check";

// The faults that settle fast, so that many more schedules fit; beside model-check.test.ts, on its own pair.
const pair = twoInstances();

describe("model check: concurrent switches on two instances with a misbehaving provider", () => {
  it("under `lease`, many more schedules with the faults that settle fast: the same holds", async () => {
    await fc.assert(modelProperty(pair, "lease", "quick"), {
      seed: modelSeed,
      numRuns: modelRuns.quick,
      endOnFailure: true,
    });
  }, 900_000);
});
