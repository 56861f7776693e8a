import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startApp, type RunningApp } from "./harness/app-server";
import { appClient, type AppClient } from "./harness/http-client";
import { demoUsers, isAllowed, leaseBoundMs, playSchedule, scheduleArbitrary, settles } from "./harness/schedules";

// Two app instances on one database: the suite's app and a second one.
const lab = appClient(inject("appUrl"));
let second: RunningApp;
let sessions: Record<(typeof demoUsers)[number], AppClient>[] = [];

beforeAll(async () => {
  second = await startApp({ databaseUrl: inject("databaseUrl"), port: Number(process.env.MODEL_APP_PORT ?? 3218) });
});
afterAll(() => second?.stop());

async function signInEverywhere(): Promise<void> {
  sessions = await Promise.all(
    [lab, appClient(second.baseUrl)].map(async (instance) => {
      const clients = await Promise.all(demoUsers.map((userId) => instance.signedIn(userId)));
      return Object.fromEntries(demoUsers.map((userId, index) => [userId, clients[index]!])) as Record<
        (typeof demoUsers)[number],
        AppClient
      >;
    }),
  );
}

/** One schedule, then quiescence: the property the checker asserts for every schedule it draws. */
const property = (strategy: string) =>
  fc.asyncProperty(scheduleArbitrary(2), async (schedule) => {
    await lab.reset();
    await signInEverywhere();
    const outcomes = await playSchedule(lab, sessions, schedule, strategy);
    const { leasesFree, consistent } = await settles(lab, sessions[0]!, leaseBoundMs(schedule));
    const unexpected = outcomes.filter((outcome) => !isAllowed(outcome));
    if (unexpected.length > 0 || !leasesFree || !consistent) {
      const audit = consistent
        ? null
        : (await lab.audit()).users.flatMap((user: { violations: string[] }) => user.violations);
      throw new Error(
        `answers not allowed: ${JSON.stringify(unexpected)}; leases freed: ${leasesFree}; audit: ${JSON.stringify(audit)}`,
      );
    }
  });

describe("model check: concurrent switches on two instances with a misbehaving provider", () => {
  it("under `lease`, every schedule settles: allowed answers only, no lease stuck, a consistent audit", async () => {
    await fc.assert(property("lease"), { numRuns: Number(process.env.MODEL_RUNS ?? 25), endOnFailure: true });
  }, 600_000);

  it("under `none`, the same check finds a violation (so it can fail)", async () => {
    const result = await fc.check(property("none"), { numRuns: 25, endOnFailure: true });
    expect(result.failed).toBe(true);
  }, 600_000);
});
