/**
 * The switch over HTTP against the built app (`next start`), as a browser would send it. Provider latency
 * L is fixed with no jitter, so 2L (the two provider calls, unlink then link) is each switch's floor.
 */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema";
import { appClient, type AppClient } from "../test/harness/http-client";
import { addBenchUsers, type BenchUser } from "./bench-users";
import { processCpuMs, processesCpuMs } from "./process-cpu";
import { distribution, quantiles, repeated, shuffled, type Distribution, type Repeated } from "./stats";

export const strategies = ["lease", "transaction", "advisory", "optimistic", "none"] as const;
export type Strategy = (typeof strategies)[number];
/** The strategies measured with a part the main run does not start: `redis` (bench/parts.ts). */
export type LabStrategy = Strategy | "redis";

/**
 * A lab setting change, tried again after a pause when the app answers 500: shrinking the pool while
 * the last wave's connections are still being returned, or a shared server briefly out of connections.
 */
async function configure(lab: AppClient, patch: unknown): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return void (await lab.configure(patch));
    } catch (error) {
      if (attempt === 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
  }
}

/** A lab with `userCount` bench users, everything else back to the seed, and these settings. */
export async function freshLab(
  lab: AppClient,
  db: Kysely<Database>,
  userCount: number,
  settings: { strategy: LabStrategy; poolSize: number; latencyMs: number },
): Promise<BenchUser[]> {
  await lab.reset();
  const users = await addBenchUsers(db, userCount);
  await configure(lab, {
    strategy: settings.strategy,
    poolSize: settings.poolSize,
    leaseTtlMs: 10_000,
    provider: { latencyMode: "fixed", latencyMs: settings.latencyMs, jitterMs: 0 },
  });
  return users;
}

/** A signed-in client per user, and each user's switch back and forth between its two identities. */
async function switchers(baseUrl: string, users: BenchUser[]) {
  const lab = appClient(baseUrl);
  const clients = await Promise.all(users.map((user) => lab.signedIn(user.id)));
  const primary = users.map((user) => user.identities[0]);
  return {
    /** The next switch of user `index`: to its other identity; what it answered, and in how many ms. */
    async switchOnce(index: number, client = clients[index]!): Promise<{ status: number; ms: number }> {
      const user = users[index]!;
      const target = primary[index] === user.identities[0] ? user.identities[1] : user.identities[0];
      const started = performance.now();
      const answer = await client.promote(user.id, target);
      const ms = performance.now() - started;
      if (answer.status === 200) primary[index] = target;
      return { status: answer.status, ms };
    },
    clients,
  };
}

export interface SingleSwitchResult<S extends LabStrategy = Strategy> {
  strategy: S;
  latencyMs: number;
  /** Answer time of one switch alone, per repetition's p50, and all samples pooled. */
  p50: Repeated;
  pooled: Distribution;
  shape: number[];
  /** Time spent outside the two provider calls: answer time − 2L, at p50. */
  outsideProviderP50: Repeated;
  /** The app process's CPU time over the measured switches, per switch (null without /proc). */
  appCpuMsPerSwitch: number | null;
}

/**
 * A lone switch's times: `repetitions` runs of `samples` switches one after the other (`timedSwitch` answers each
 * one's ms), and each run's p50 with and without the two provider calls' 2L. `beforeRun` is told each run's index.
 */
export async function loneSwitchRuns(
  timedSwitch: () => Promise<number>,
  options: { latencyMs: number; samples: number; repetitions: number },
  beforeRun: (repetition: number) => void = () => {},
) {
  const runs: number[][] = [];
  for (let repetition = 0; repetition < options.repetitions; repetition++) {
    beforeRun(repetition);
    const times: number[] = [];
    for (let i = 0; i < options.samples; i++) times.push(await timedSwitch());
    runs.push(times);
  }
  return { runs, ...loneFigures(runs, options.latencyMs) };
}

/** Each run's p50, with and without the two provider calls' 2L. */
function loneFigures(runs: number[][], latencyMs: number): { p50: Repeated; outsideProviderP50: Repeated } {
  const p50s = runs.map((run) => distribution(run).p50);
  return { p50: repeated(p50s), outsideProviderP50: repeated(p50s.map((p50) => p50 - 2 * latencyMs)) };
}

/**
 * One switch at a time, for one user, per strategy: no contention, so what is left over 2L is the route's own cost.
 * The strategies take turns: each repetition runs every one of them once, in a shuffled order, on a fresh lab (its
 * strategy set, warmed up), so that a busy moment of the machine lands on one repetition of each rather than on
 * all of one strategy's (`none` run first, as an install's load ebbed, once took 131–135 ms in each of its
 * repetitions against 111–115 for every other strategy).
 */
export async function singleSwitches<S extends LabStrategy>(
  baseUrl: string,
  db: Kysely<Database>,
  options: {
    strategies: S[];
    latencyMs: number;
    samples: number;
    repetitions: number;
    warmup: number;
    appPid?: number;
    random: () => number;
  },
  progress: (note: string) => void,
): Promise<SingleSwitchResult<S>[]> {
  const measured = new Map(options.strategies.map((strategy) => [strategy, { runs: [] as number[][], cpuMs: 0 }]));
  for (let repetition = 0; repetition < options.repetitions; repetition++)
    for (const strategy of shuffled(options.strategies, options.random)) {
      progress(`one switch, ${strategy}: repetition ${repetition + 1}/${options.repetitions}`);
      const users = await freshLab(appClient(baseUrl), db, 1, {
        strategy,
        poolSize: 4,
        latencyMs: options.latencyMs,
      });
      const { switchOnce } = await switchers(baseUrl, users);
      for (let i = 0; i < options.warmup; i++) await switchOnce(0);
      const timedSwitch = async () => {
        const { status, ms } = await switchOnce(0);
        if (status !== 200) throw new Error(`a lone switch under ${strategy} answered ${status}`);
        return ms;
      };
      const cpuBefore = processCpuMs(options.appPid);
      const { runs } = await loneSwitchRuns(timedSwitch, { ...options, repetitions: 1 });
      const cpuAfter = processCpuMs(options.appPid);
      const sofar = measured.get(strategy)!;
      sofar.runs.push(...runs);
      sofar.cpuMs = cpuBefore === null || cpuAfter === null ? NaN : sofar.cpuMs + (cpuAfter - cpuBefore);
    }
  return options.strategies.map((strategy) => {
    const { runs, cpuMs } = measured.get(strategy)!;
    return {
      strategy,
      latencyMs: options.latencyMs,
      ...loneFigures(runs, options.latencyMs),
      pooled: distribution(runs.flat()),
      shape: quantiles(runs.flat()),
      appCpuMsPerSwitch: Number.isNaN(cpuMs) ? null : cpuMs / runs.flat().length,
    };
  });
}

export interface WaveResult {
  strategy: Strategy;
  /** One app instance, or two behind HAProxy (round-robin) on the same database. */
  instances: 1 | 2;
  users: number;
  poolSize: number;
  /** Until every one of the K simultaneous switches had answered, per repetition. */
  wallMs: Repeated;
  predictedMs: number;
  /** The app process's CPU time over the point's waves, per switch (null without /proc). */
  appCpuMsPerSwitch: number | null;
  statuses: Record<string, number>;
  consistent: boolean;
}

/** How many pool turns a wave of K switches takes with a pool of P: only the connection-holding guards queue. */
export const predictedWaveTurns = (strategy: Strategy, users: number, poolSize: number): number =>
  strategy === "transaction" || strategy === "advisory" ? Math.ceil(users / poolSize) : 1;

/** What each strategy should cost K users switching at once with a pool of P: the lease is not pool-bound. */
export const predictedWallMs = (strategy: Strategy, users: number, poolSize: number, latencyMs: number): number =>
  predictedWaveTurns(strategy, users, poolSize) * 2 * latencyMs;

/**
 * K users each send one switch at the same moment (one wave); repeated. The pool size changes between
 * points through the lab's setting, without a reset: the users keep switching back and forth.
 */
export async function scalingWaves(
  baseUrl: string,
  db: Kysely<Database>,
  options: {
    strategy: Strategy;
    userCounts: number[];
    poolSizes: number[];
    latencyMs: number;
    repetitionsFor: (users: number, poolSize: number) => number;
    /** The app's processes (one per instance), whose CPU time per switch is measured. */
    appPids?: number[];
    instances?: 1 | 2;
  },
  progress: (note: string) => void,
): Promise<WaveResult[]> {
  const lab = appClient(baseUrl);
  const most = Math.max(...options.userCounts);
  const users = await freshLab(lab, db, most, {
    strategy: options.strategy,
    poolSize: options.poolSizes[0]!,
    latencyMs: options.latencyMs,
  });
  const { switchOnce } = await switchers(baseUrl, users);
  // Warm-up: one wave of every user on the largest pool, so no measured wave pays a first compile or a
  // cold connection (on the smallest pool, the warm-up alone would take ⌈K/P⌉ × 2L under transaction).
  await configure(lab, { poolSize: Math.max(...options.poolSizes) });
  await Promise.all(users.map((_, index) => switchOnce(index)));
  const results: WaveResult[] = [];
  for (const poolSize of options.poolSizes) {
    await configure(lab, { poolSize });
    for (const userCount of options.userCounts) {
      const walls: number[] = [];
      const statuses: Record<string, number> = {};
      const repetitions = options.repetitionsFor(userCount, poolSize);
      const cpuBefore = processesCpuMs(options.appPids ?? []);
      for (let repetition = 0; repetition < repetitions; repetition++) {
        const where = options.instances === 2 ? ", two instances" : "";
        progress(
          `scaling${where}, ${options.strategy}: P=${poolSize} K=${userCount}, wave ${repetition + 1}/${repetitions}`,
        );
        const started = performance.now();
        const answers = await Promise.all(Array.from({ length: userCount }, (_, index) => switchOnce(index)));
        walls.push(performance.now() - started);
        for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      }
      const cpuAfter = processesCpuMs(options.appPids ?? []);
      results.push({
        strategy: options.strategy,
        instances: options.instances ?? 1,
        users: userCount,
        poolSize,
        wallMs: repeated(walls),
        predictedMs: predictedWallMs(options.strategy, userCount, poolSize, options.latencyMs),
        appCpuMsPerSwitch:
          cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / (userCount * repetitions),
        statuses,
        consistent: (await lab.audit()).consistent,
      });
    }
  }
  return results;
}

export interface BystanderResult {
  strategy: LabStrategy | "idle";
  users: number;
  poolSize: number;
  reads: Distribution;
}

/**
 * A bystander (alan, who never switches) reads his own page every `readEveryMs`, open loop (sent on
 * schedule whether or not the last one answered, so a stalled pool shows as slow reads, not fewer), while
 * K users switch back and forth without pause (closed loop per user), from the moment the first of their
 * switches have answered. K = 0 is the idle baseline.
 */
export async function bystanderReads(
  baseUrl: string,
  db: Kysely<Database>,
  options: {
    strategy: LabStrategy;
    users: number;
    poolSize: number;
    latencyMs: number;
    reads: number;
    readEveryMs: number;
  },
  progress: (note: string) => void,
): Promise<BystanderResult> {
  const lab = appClient(baseUrl);
  const users = await freshLab(lab, db, Math.max(1, options.users), options);
  const { switchOnce } = await switchers(baseUrl, users);
  const bystander = await lab.signedIn("alan");
  for (let i = 0; i < 20; i++) await bystander.get("/api/users/alan");
  progress(`bystander, ${options.users === 0 ? "idle" : options.strategy}: K=${options.users} P=${options.poolSize}`);
  return {
    strategy: options.users === 0 ? "idle" : options.strategy,
    users: options.users,
    poolSize: options.poolSize,
    reads: (await readsWhileSwitching(() => bystander.get("/api/users/alan"), switchOnce, options)).times,
  };
}

/**
 * `reads` calls of `read`, one every `readEveryMs`, open loop, while `users` users switch back and forth
 * without pause (`switchOnce` by user index, closed loop per user), from the moment the first of their switches
 * have answered: each read's time until its answer, and the reads' statuses.
 */
export async function readsWhileSwitching(
  read: () => Promise<{ status: number }>,
  switchOnce: (index: number) => Promise<unknown>,
  options: { users: number; reads: number; readEveryMs: number },
): Promise<{ times: Distribution; statuses: Record<string, number> }> {
  let running = true;
  // The load's warm-up: reads are measured once the first switches have answered (all K, or 16), so they
  // see the load's steady state, not its first burst (K switches arriving at the same moment).
  const warmupSwitches = Math.min(options.users, 16);
  let answered = 0;
  let warmedUp = () => {};
  const warm = new Promise<void>((resolve) => (warmedUp = resolve));
  const load = Array.from({ length: options.users }, async (_, index) => {
    while (running) {
      await switchOnce(index);
      if (++answered === warmupSwitches) warmedUp();
    }
  });
  if (options.users > 0) await warm;
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  const pending: Promise<void>[] = [];
  for (let i = 0; i < options.reads; i++) {
    const before = performance.now();
    pending.push(
      read().then(({ status }) => {
        times.push(performance.now() - before);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, options.readEveryMs));
  }
  await Promise.all(pending);
  running = false;
  await Promise.all(load);
  return { times: distribution(times), statuses };
}

export interface TwoInstancesResult {
  users: number;
  wallMs: Repeated;
  statuses: Record<string, number>;
  consistent: boolean;
}

/**
 * Two app instances on one database, under `lease`: each of K users clicks twice at once, one click on
 * each instance. Exactly one of each pair may switch (200), the other must be refused (409).
 */
export async function twoInstances(
  baseUrls: [string, string],
  db: Kysely<Database>,
  options: { users: number; latencyMs: number; repetitions: number },
  progress: (note: string) => void,
): Promise<TwoInstancesResult> {
  const lab = appClient(baseUrls[0]);
  const users = await freshLab(lab, db, options.users, {
    strategy: "lease",
    poolSize: 4,
    latencyMs: options.latencyMs,
  });
  const first = await switchers(baseUrls[0], users);
  const second = await switchers(baseUrls[1], users);
  const walls: number[] = [];
  const statuses: Record<string, number> = {};
  for (let repetition = 0; repetition < options.repetitions; repetition++) {
    progress(`two instances: K=${options.users}, wave ${repetition + 1}/${options.repetitions}`);
    const started = performance.now();
    const answers = await Promise.all(
      users.flatMap((_, index) => [first.switchOnce(index), first.switchOnce(index, second.clients[index])]),
    );
    walls.push(performance.now() - started);
    for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
  }
  return { users: options.users, wallMs: repeated(walls), statuses, consistent: (await lab.audit()).consistent };
}
