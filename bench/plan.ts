/** What `npm run bench` measures, and how often: the full run, or `--quick` (a smoke run, not figures). */
import type { CpuLoad } from "./app-cpu";
import { strategies, type Strategy } from "./http-load";

const cpuLoads = (users: number, switchesEach: number, waves: { many: number; one: number }): CpuLoad[] => [
  { users, switchesEach: 1, readsPageFirst: false, waves: waves.many },
  { users: 1, switchesEach, readsPageFirst: false, waves: waves.one },
  { users: 1, switchesEach, readsPageFirst: true, waves: waves.one },
];

/**
 * Waves of 64 switches every server started for the bench runs before it is measured: its JIT is still compiling
 * long after the first waves. From their start (`bench/jit-warmup.ts`, seed 41, two runs), the lab off's and
 * next-min's CPU per switch fell until waves 21–40 and then held within the waves' spread; after 10 waves (what
 * the bench ran before) they stood at 1.1–1.3× and 1.2–1.7× their later figures. Turbofan compiled 458 functions
 * in the first 10 waves and still 152 in waves 61–70. A server in use has long passed that point.
 */
export const serverWarmupWaves = 40;

const quickPlan = {
  micro: { iterations: 200, warmup: 50, repetitions: 3 },
  contention: { acquirers: [10, 50], samples: 200, repetitions: 3 },
  single: { strategies: ["lease", "none"] as Strategy[], latencyMs: 50, samples: 10, repetitions: 3, warmup: 3 },
  providerAlone: { repetitions: 2 },
  scaling: { strategies: ["lease", "none", "transaction"] as Strategy[], userCounts: [1, 4, 16], poolSizes: [4] },
  bystander: { userCounts: { lease: [16], transaction: [16] }, reads: 200, readEveryMs: 20 },
  twoInstances: { users: 4, repetitions: 2 },
  clicks: { repetitions: 2 },
  balanced: { strategies: ["lease", "none"] as Strategy[], userCounts: [16], poolSizes: [4] },
  warmUp: { users: 16, waves: 3 },
  appCpu: { loads: cpuLoads(16, 3, { many: 3, one: 2 }), restMs: 3_000 },
  floorWaves: { rounds: 2, restMs: 2_000 },
};

const fullPlan: typeof quickPlan = {
  micro: { iterations: 1_000, warmup: 200, repetitions: 3 },
  contention: { acquirers: [10, 50, 90], samples: 1_000, repetitions: 3 },
  single: { strategies: [...strategies], latencyMs: 50, samples: 15, repetitions: 3, warmup: 5 },
  providerAlone: { repetitions: 5 },
  scaling: {
    // `none` is the lease's reference: what the same switch costs with no lock at all.
    strategies: ["lease", "none", "transaction", "advisory"],
    userCounts: [1, 4, 16, 64],
    poolSizes: [2, 4, 16],
  },
  // A read every 20 ms: one page read alone takes about 9 ms of the app here (Next.js, the session, the
  // view), so a faster open loop measures the bystander's own queue, not the switches' effect on it (at
  // 6 ms, the idle runs' p99 ranged 40–213 ms). K = 64 under transaction is left out (its queue alone
  // takes 13 s to fill and drain); the chart's curve grows from K = 1 to 16 already.
  bystander: { userCounts: { lease: [1, 4, 16, 64], transaction: [1, 4, 16] }, reads: 1_000, readEveryMs: 20 },
  twoInstances: { users: 16, repetitions: 3 },
  clicks: { repetitions: 5 },
  // Two instances behind HAProxy: where one event loop is the limit, the second core is the next step.
  balanced: { strategies: ["lease", "none"], userCounts: [64], poolSizes: [2, 4, 16] },
  // Every app and server started for a step runs these first, before anything of it is measured.
  warmUp: { users: 64, waves: serverWarmupWaves },
  // K = 1: 10 switches one after the other per wave.
  appCpu: { loads: cpuLoads(64, 10, { many: 7, one: 5 }), restMs: 20_000 },
  // The app and the floors taking turns (floor-waves.ts), each K and P of the scaling step and the 30-click storm:
  // a round not measured, then 5; under the storm, each server's CPU at rest first (5 windows each, 1 s apiece).
  floorWaves: { rounds: 5, restMs: 5_000 },
};

export const planFor = (quick: boolean) => (quick ? quickPlan : fullPlan);
export type Plan = typeof quickPlan;

/** L of every step but the lone switch's. */
export const scalingLatencyMs = 200;
export const bystanderPoolSize = 4;
/** The apps' pools start at 16 connections, so that the lab's pool size, not the start-up value, rules. */
export const appEnv = { DB_POOL_SIZE: "16" };
