import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  everyLeaseScheduleSettles,
  modelProperty,
  modelRuns,
  modelSeed,
  twoInstances,
  unfencedSaveProperty,
} from "./harness/model-check";

// Concurrent switches on two instances; the quick schedules run beside this file (model-check-quick.test.ts).
const pair = twoInstances();

describe("model check: concurrent switches on two instances with a misbehaving provider", () => {
  it("under `lease`, every schedule settles: allowed answers only, no lease stuck, a consistent audit", async () => {
    await everyLeaseScheduleSettles(pair, "rich", modelRuns.rich);
  }, 900_000);

  it("under `none`, the same check finds a violation (so it can fail)", async () => {
    const result = await fc.check(modelProperty(pair, "none"), {
      seed: modelSeed,
      numRuns: modelRuns.none,
      endOnFailure: true,
    });
    expect(result.failed).toBe(true);
  }, 600_000);

  it(
    "under `lease` with the save's condition removed, a switch paused before its save overwrites the " +
      "next holder: a violation",
    async () => {
      const result = await fc.check(unfencedSaveProperty(pair), {
        seed: modelSeed,
        numRuns: modelRuns.unfencedSave,
        endOnFailure: true,
      });
      expect(result.failed).toBe(true);
    },
    600_000,
  );
});
