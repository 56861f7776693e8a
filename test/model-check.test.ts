import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startApp, type RunningApp } from "./harness/app-server";
import { appClient } from "./harness/http-client";
import { checkSchedule, holds, scheduleArbitrary, type ScheduleProfile } from "./harness/schedules";

// Two app instances on one database: the suite's app and a second one.
const lab = appClient(inject("appUrl"));
let second: RunningApp;

beforeAll(async () => {
  second = await startApp({ databaseUrl: inject("databaseUrl"), port: Number(process.env.MODEL_APP_PORT ?? 3218) });
});
afterAll(() => second?.stop());

const property = (strategy: string, profile: ScheduleProfile = "rich") =>
  fc.asyncProperty(scheduleArbitrary(2, 10, profile), async (schedule) => {
    const checked = await checkSchedule(lab, [lab, appClient(second.baseUrl)], schedule, strategy);
    if (!holds(checked)) {
      const { unexpected, leasesFree, violations } = checked;
      throw new Error(
        `answers not allowed: ${JSON.stringify(unexpected)}; leases freed: ${leasesFree}; audit: ${JSON.stringify(violations)}`,
      );
    }
  });

describe("model check: concurrent switches on two instances with a misbehaving provider", () => {
  it("under `lease`, every schedule settles: allowed answers only, no lease stuck, a consistent audit", async () => {
    await fc.assert(property("lease"), { numRuns: Number(process.env.MODEL_RUNS ?? 60), endOnFailure: true });
  }, 600_000);

  it("under `lease`, many more schedules with the faults that settle fast: the same holds", async () => {
    await fc.assert(property("lease", "quick"), {
      numRuns: Number(process.env.MODEL_QUICK_RUNS ?? 140),
      endOnFailure: true,
    });
  }, 900_000);

  it("under `none`, the same check finds a violation (so it can fail)", async () => {
    const result = await fc.check(property("none"), { numRuns: 25, endOnFailure: true });
    expect(result.failed).toBe(true);
  }, 600_000);
});
