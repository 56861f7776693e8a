/**
 * The model checker's property, seed and counts, shared by its files: the rich schedules (with the `none`
 * control) and the quick ones run side by side, each file on its own pair of app instances.
 */
import fc from "fast-check";
import { afterAll, beforeAll, inject } from "vitest";
import { startPgBouncer, type RunningPgBouncer } from "../../scripts/parts/pgbouncer";
import { startApp, type RunningApp } from "./app-server";
import { appClient, type AppClient } from "./http-client";
import {
  checkSchedule,
  holds,
  scheduleArbitrary,
  unfencedSaveArbitrary,
  type Schedule,
  type ScheduleProfile,
} from "./schedules";

// The full run by default (`npm run test:model`); `npm test` runs a sample: fewer schedules, a fixed seed. One
// seed draws the same schedules again (their timing on the machine is the machine's).
export const modelSeed = Number(process.env.MODEL_SEED ?? Math.floor(Math.random() * 2 ** 31));
export const modelRuns = {
  rich: Number(process.env.MODEL_RUNS ?? 60),
  quick: Number(process.env.MODEL_QUICK_RUNS ?? 140),
  // The quick schedules again, with one of the two instances behind PgBouncer.
  pooled: Number(process.env.MODEL_POOLED_RUNS ?? 40),
  // The controls stop at their first violation.
  none: 25,
  unfencedSave: 10,
};
export const modelReplay =
  `MODEL_SEED=${modelSeed} MODEL_RUNS=${modelRuns.rich} MODEL_QUICK_RUNS=${modelRuns.quick} ` +
  `MODEL_POOLED_RUNS=${modelRuns.pooled} npm run test:model`;

/**
 * Two app instances on the file's database: the file's app and a second one, started for the file; with
 * `throughPgBouncer`, the second one's pool goes through PgBouncer in transaction pooling, as
 * `npm run dev -- --pgbouncer` runs it.
 */
export function twoInstances({ throughPgBouncer = false } = {}): { lab: AppClient; instances: () => AppClient[] } {
  const lab = appClient(inject("appUrl"));
  let second: RunningApp;
  let pgbouncer: RunningPgBouncer | undefined;
  beforeAll(async () => {
    console.info(`model check: seed ${modelSeed}; the same schedules again: ${modelReplay}`);
    const directUrl = inject("databaseUrl");
    pgbouncer = throughPgBouncer
      ? await startPgBouncer(directUrl, Number(process.env.PGBOUNCER_PORT ?? 6433))
      : undefined;
    const pooledEnv = pgbouncer?.appEnv(directUrl);
    second = await startApp({
      databaseUrl: pooledEnv?.DATABASE_URL ?? directUrl,
      port: Number(process.env.MODEL_APP_PORT ?? 3218),
      env: pooledEnv ? { ...pooledEnv, LAB_INSTANCE: "pooled" } : {},
    });
  });
  afterAll(async () => {
    await second?.stop();
    await pgbouncer?.stop();
  });
  return { lab, instances: () => [lab, appClient(second.baseUrl)] };
}

/** Every schedule drawn settles: allowed answers only, no lease stuck, a consistent audit. */
export const modelProperty = (
  pair: ReturnType<typeof twoInstances>,
  strategy: string,
  profile: ScheduleProfile = "rich",
) => settlingProperty(pair, strategy, scheduleArbitrary(2, 10, profile));

/** Under `lease`, every one of `numRuns` schedules of `profile` drawn from the seed settles (fails at the first that does not). */
export const everyLeaseScheduleSettles = (
  pair: ReturnType<typeof twoInstances>,
  profile: ScheduleProfile,
  numRuns: number,
): Promise<void> => fc.assert(modelProperty(pair, "lease", profile), { seed: modelSeed, numRuns, endOnFailure: true });

/** The same property over the schedules of the control that removes the lease's condition from the save. */
export const unfencedSaveProperty = (pair: ReturnType<typeof twoInstances>) =>
  settlingProperty(pair, "lease", unfencedSaveArbitrary(2));

const settlingProperty = (
  { lab, instances }: ReturnType<typeof twoInstances>,
  strategy: string,
  schedules: fc.Arbitrary<Schedule>,
) =>
  fc.asyncProperty(schedules, async (schedule) => {
    const checked = await checkSchedule(lab, instances(), schedule, strategy);
    if (!holds(checked)) {
      const { unexpected, leasesFree, violations } = checked;
      throw new Error(
        `answers not allowed: ${JSON.stringify(unexpected)}; leases freed: ${leasesFree}; audit: ${JSON.stringify(violations)}`,
      );
    }
  });
