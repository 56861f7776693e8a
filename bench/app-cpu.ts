/**
 * What a switch costs in CPU, server by server, in one run (issue 28: a switch at its real floor). Servers on
 * one database and one simulated provider process, each measured alone in turn: the app with the lab on and
 * off, the product's switch outside Next.js, a minimal Next.js route (`next-min`), the least switch in such a
 * route (`next-bare`) and the machine's floor (`bare`) (cpu-servers.ts). Each load runs in waves, the servers
 * taking turns wave by wave in a seeded order: K = 64 users switching at once, K = 1 user switching again and
 * again, and one user reading the page then switching (the servers that serve the page).
 *
 * CPU is read from /proc for each server's processes only (the provider, the database and this client are
 * other processes), over each wave and the 300 ms after it, net of the server's own rate at rest: the median
 * of `restWindows` windows spread over `restMs`, the servers taking turns, so that one burst of other work (a
 * collection, a timer, another process on the machine) moves one window and not the rate. A single 10 s window
 * once gave the lab off 3.8 % of a core at rest, more than its K = 1 waves then used: their figures came out
 * negative.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema";
import { appClient, type AppClient } from "../test/harness/http-client";
import type { BenchUser } from "./bench-users";
import { monotonicMicros } from "./cpu-profile";
import { freshLab, loneSwitchRuns } from "./http-load";
import { processTreeCpu, type TreeCpu } from "./process-cpu";
import { repeated, shuffled, type Repeated } from "./stats";

export const cpuServerNames = ["lab on", "lab off", "outside Next.js", "next-min", "next-bare", "bare"] as const;
export type CpuServerName = (typeof cpuServerNames)[number];

/**
 * The servers BENCH_CPU_SERVERS names ("lab off,next-bare"), in its order, for `bench:cpu` and `bench:profile`;
 * every server when it is unset. Fewer servers take fewer turns: each idles less between its waves.
 */
export function cpuServersNamed(named = process.env.BENCH_CPU_SERVERS): CpuServerName[] {
  if (named === undefined) return [...cpuServerNames];
  const only = [...new Set(named.split(",").map((name) => name.trim()))];
  const unknown = only.filter((name) => !(cpuServerNames as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new Error(
      `BENCH_CPU_SERVERS: no server named ${unknown.join(", ")}; the servers: ${cpuServerNames.join(", ")}`,
    );
  return only as CpuServerName[];
}

export interface CpuServer {
  /** One of `CpuServerName` in `npm run bench`; a variant's own name elsewhere (gzip-cpu.ts). */
  name: string;
  baseUrl: string;
  pid: number;
  /** The apps (the lab on, the lab off) check a session cookie: each user's client signs in; the others take none. */
  isTheApp: boolean;
  /** Serves a user's page at `GET /api/users/{id}` (the page read + switch load): the apps, and next-bare. */
  servesPage: boolean;
  /** Sent with each of its requests. */
  headers?: Record<string, string>;
}

/** A started server (an app, a `RunningServer`) as the CPU step measures it. */
export const cpuServer = (
  name: string,
  running: { baseUrl: string; process: { pid?: number } },
  isTheApp: boolean,
  servesPage = isTheApp,
): CpuServer => ({ name, baseUrl: running.baseUrl, pid: running.process.pid!, isTheApp, servesPage });

/** One of `npm run bench`'s servers: the apps check a session; they and next-bare serve a user's page. */
export function benchCpuServer(name: CpuServerName, running: { baseUrl: string; process: { pid?: number } }) {
  const isTheApp = name === "lab on" || name === "lab off";
  return cpuServer(name, running, isTheApp, isTheApp || name === "next-bare");
}

/** K users, each switching `switchesEach` times one after the other, all K starting at once; `waves` times. */
export interface CpuLoad {
  users: number;
  switchesEach: number;
  /** Each switch after a read of the user's page (`GET /api/users/{id}`), as a user's click follows a look. */
  readsPageFirst: boolean;
  waves: number;
}

export const loadName = (load: Pick<CpuLoad, "users" | "readsPageFirst">) =>
  load.readsPageFirst ? `page read + switch, K=${load.users}` : `K=${load.users}`;

export interface AppCpuResult {
  name: string;
  load: string;
  readsPageFirst: boolean;
  /** At rest, after the warm-up and before any load: CPU time per second of wall time, as % of one core, per window. */
  restingPercentOfCore: Repeated;
  users: number;
  switchesEach: number;
  /** Per wave: until all its switches had answered. */
  wallMs: Repeated;
  /** Per wave: the server's CPU time net of its resting rate, divided by the wave's switches. */
  cpuMsPerSwitch: Repeated;
  /**
   * Per wave: the part of it on the server's main threads, net of their own rate at rest: what a V8 profile
   * sees; the rest ran on V8's helper threads (its collector's and compiler's: bench/v8-threads-cpu.ts).
   */
  mainThreadMsPerSwitch: Repeated;
  /** Per wave: how long the main threads waited for a core, net of rest (`TreeCpu`); not CPU time. */
  mainThreadWaitMsPerSwitch: Repeated;
  statuses: Record<string, number>;
  /** When the measured waves ran, in µs of the monotonic clock (for a CPU profile's samples). */
  window: { fromUs: number; toUs: number };
}

/** After a wave, before its CPU is read: the server's work after its answers (the lab's lane writes). */
export const settleMs = 300;
const restWindows = 5;

/** CPU ms per wall-clock second the server spends with nothing to do, over one window (all threads, main ones). */
async function restingRate(server: CpuServer, windowMs: number): Promise<TreeCpu> {
  const before = processTreeCpu(server.pid)!;
  const started = performance.now();
  await sleep(windowMs);
  const after = processTreeCpu(server.pid)!;
  const seconds = (performance.now() - started) / 1000;
  const rate = (of: keyof TreeCpu) => (after[of] - before[of]) / seconds;
  return { allMs: rate("allMs"), mainThreadMs: rate("mainThreadMs"), mainThreadWaitMs: rate("mainThreadWaitMs") };
}

/** Each server's resting rates per window, the servers taking turns window by window in a seeded order. */
export async function restingRates<S extends CpuServer>(
  servers: S[],
  options: Pick<Options, "restMs" | "random">,
  progress: (note: string) => void,
  step = "CPU per switch",
) {
  const windows = new Map<S, TreeCpu[]>(servers.map((server) => [server, []]));
  await sleep(settleMs);
  for (let round = 0; round < restWindows; round++)
    for (const server of shuffled(servers, options.random)) {
      progress(`${step}: ${server.name} at rest, window ${round + 1}/${restWindows}`);
      windows.get(server)!.push(await restingRate(server, options.restMs / restWindows));
    }
  return new Map(
    [...windows].map(([server, rates]) => [
      server,
      {
        all: repeated(rates.map((rate) => rate.allMs)),
        mainThread: repeated(rates.map((rate) => rate.mainThreadMs)),
        mainThreadWait: repeated(rates.map((rate) => rate.mainThreadWaitMs)),
      },
    ]),
  );
}

/**
 * The users' switches against any server: each user switches to its other identity, and learns its primary
 * from the answer (next-min changes nothing and says so). One record of primaries for all servers, since all
 * of them change the same rows.
 */
export async function serverSwitchers(servers: CpuServer[], users: BenchUser[]) {
  const primary = users.map((user) => user.identities[0]);
  const clientsOf = new Map<CpuServer, AppClient[]>();
  for (const server of servers) {
    const plain = appClient(server.baseUrl);
    const signIn = (user: BenchUser) => (server.isTheApp ? plain.signedIn(user.id) : Promise.resolve(plain));
    clientsOf.set(server, await Promise.all(users.map(signIn)));
  }
  const statuses = new Map<string, Record<string, number>>();
  const count = (key: string, status: number) => {
    const counts = statuses.get(key) ?? {};
    counts[status] = (counts[status] ?? 0) + 1;
    statuses.set(key, counts);
  };
  const switchOnce = async (server: CpuServer, load: CpuLoad, index: number) => {
    const client = clientsOf.get(server)![index]!;
    const user = users[index]!;
    if (load.readsPageFirst) await client.call("GET", `/api/users/${user.id}`, undefined, server.headers);
    const target = primary[index] === user.identities[0] ? user.identities[1] : user.identities[0];
    const answer = await client.promote(user.id, target, server.headers);
    if (answer.status === 200) primary[index] = answer.body.primaryIdentityId;
    count(`${server.name}|${loadName(load)}`, answer.status);
    return answer.status;
  };
  const wave = (server: CpuServer, load: CpuLoad) =>
    Promise.all(
      Array.from({ length: load.users }, async (_, index) => {
        for (let step = 0; step < load.switchesEach; step++) await switchOnce(server, load, index);
      }),
    );
  return { wave, switchOnce, statuses };
}

/** Every server's first switches compile, connect and get optimised: `waves` waves of `users` at once, in turn. */
async function warmUpWaves(
  servers: CpuServer[],
  wave: (server: CpuServer, load: CpuLoad) => Promise<unknown>,
  users: number,
  waves: number,
  progress: (note: string) => void,
) {
  const load: CpuLoad = { users, switchesEach: 1, readsPageFirst: false, waves };
  for (const server of servers) {
    progress(`${server.name}: warming up`);
    for (let i = 0; i < waves; i++) await wave(server, load);
  }
}

/**
 * Warms up servers just started, before a step measures them (plan.ts's `serverWarmupWaves`): users of their own
 * under `lease`, at the given latency. The next step's `freshLab` resets the lab.
 */
export async function warmUp(
  servers: CpuServer[],
  db: Kysely<Database>,
  lab: AppClient,
  options: { users: number; waves: number; latencyMs: number; poolSize: number },
  progress: (note: string) => void,
) {
  const users = await freshLab(lab, db, options.users, {
    strategy: "lease",
    poolSize: options.poolSize,
    latencyMs: options.latencyMs,
  });
  const { wave } = await serverSwitchers(servers, users);
  await warmUpWaves(servers, wave, options.users, options.waves, progress);
}

interface Options {
  loads: CpuLoad[];
  warmupWaves: number;
  latencyMs: number;
  poolSize: number;
  /** All of a server's resting windows together. */
  restMs: number;
  /** A pause before each measured wave, as the servers' turns leave each idle for seconds (versus.ts). */
  idleBeforeWaveMs?: number;
  random: () => number;
}

/** CPU ms per second as % of one core (1,000 ms per second). */
const percentOfCore = (rate: Repeated): Repeated => repeated(rate.runs.map((each) => each / 10));

/** One measured wave: its wall time, and the server's CPU per switch (all of it, its main threads) net of rest. */
async function measuredWave(wave: () => Promise<unknown>, server: CpuServer, resting: TreeCpu, switches: number) {
  const before = processTreeCpu(server.pid)!;
  const started = performance.now();
  await wave();
  const wallMs = performance.now() - started;
  // What a wave leaves to do after its answers (a lane write, the live stream, a collection) is its cost too.
  await sleep(settleMs);
  const seconds = (performance.now() - started) / 1000;
  const after = processTreeCpu(server.pid)!;
  const used = (of: keyof TreeCpu) => (after[of] - before[of] - resting[of] * seconds) / switches;
  return {
    wallMs,
    cpuMsPerSwitch: used("allMs"),
    mainThreadMsPerSwitch: used("mainThreadMs"),
    mainThreadWaitMsPerSwitch: used("mainThreadWaitMs"),
  };
}

export async function appCpu(
  servers: CpuServer[],
  db: Kysely<Database>,
  lab: AppClient,
  options: Options,
  progress: (note: string) => void,
): Promise<AppCpuResult[]> {
  const most = Math.max(...options.loads.map((load) => load.users));
  const users = await freshLab(lab, db, most, {
    strategy: "lease",
    poolSize: options.poolSize,
    latencyMs: options.latencyMs,
  });
  const { wave, statuses } = await serverSwitchers(servers, users);
  await warmUpWaves(servers, wave, most, options.warmupWaves, progress);
  const rates = await restingRates(servers, options, progress);
  statuses.clear();
  const results: AppCpuResult[] = [];
  for (const load of options.loads) {
    const measured = servers.filter((server) => server.servesPage || !load.readsPageFirst);
    const samples = new Map(
      measured.map((server) => [
        server,
        { wallMs: [] as number[], cpu: [] as number[], main: [] as number[], wait: [] as number[] },
      ]),
    );
    const fromUs = monotonicMicros();
    for (let round = 0; round < load.waves; round++)
      for (const server of shuffled(measured, options.random)) {
        progress(`CPU per switch: ${server.name}, ${loadName(load)}, wave ${round + 1}/${load.waves}`);
        const switches = load.users * load.switchesEach;
        const rest = rates.get(server)!;
        const resting = {
          allMs: rest.all.median,
          mainThreadMs: rest.mainThread.median,
          mainThreadWaitMs: rest.mainThreadWait.median,
        };
        await sleep(options.idleBeforeWaveMs ?? 0);
        const figures = await measuredWave(() => wave(server, load), server, resting, switches);
        const sample = samples.get(server)!;
        sample.wallMs.push(figures.wallMs);
        sample.cpu.push(figures.cpuMsPerSwitch);
        sample.main.push(figures.mainThreadMsPerSwitch);
        sample.wait.push(figures.mainThreadWaitMsPerSwitch);
      }
    const window = { fromUs, toUs: monotonicMicros() };
    for (const [server, { wallMs, cpu, main, wait }] of samples)
      results.push({
        name: server.name,
        load: loadName(load),
        readsPageFirst: load.readsPageFirst,
        restingPercentOfCore: percentOfCore(rates.get(server)!.all),
        users: load.users,
        switchesEach: load.switchesEach,
        wallMs: repeated(wallMs),
        cpuMsPerSwitch: repeated(cpu),
        mainThreadMsPerSwitch: repeated(main),
        mainThreadWaitMsPerSwitch: repeated(wait),
        statuses: statuses.get(`${server.name}|${loadName(load)}`) ?? {},
        window,
      });
  }
  return results;
}

/** A server's lone switch: one user switching again and again, each switch timed. */
export interface LoneSwitchResult {
  name: string;
  latencyMs: number;
  /** Per repetition. */
  p50: Repeated;
  /** The p50 less the two provider calls' 2L. */
  outsideProviderP50: Repeated;
}

/**
 * The lone-switch step's measure (http-load.ts's `loneSwitchRuns`, at its L) for each server that calls the provider
 * (all but next-min): `warmup` switches, then `repetitions` × `samples` timed, each server's in a row as the app's
 * are there, the servers in a seeded order. The least switch in Next.js (next-bare) and the floor's (bare) beside
 * the app's, in one run: what of a lone switch's time outside the provider is no code of ours.
 */
export async function loneSwitches(
  servers: CpuServer[],
  db: Kysely<Database>,
  lab: AppClient,
  options: { latencyMs: number; samples: number; repetitions: number; warmup: number; poolSize: number },
  random: () => number,
  progress: (note: string) => void,
): Promise<LoneSwitchResult[]> {
  const users = await freshLab(lab, db, 1, {
    strategy: "lease",
    poolSize: options.poolSize,
    latencyMs: options.latencyMs,
  });
  const { switchOnce } = await serverSwitchers(servers, users);
  const load: CpuLoad = { users: 1, switchesEach: 1, readsPageFirst: false, waves: 1 };
  const timedSwitch = async (server: CpuServer) => {
    const started = performance.now();
    const status = await switchOnce(server, load, 0);
    if (status !== 200) throw new Error(`a lone switch on ${server.name} answered ${status}`);
    return performance.now() - started;
  };
  const results: LoneSwitchResult[] = [];
  for (const server of shuffled(
    servers.filter((each) => each.name !== "next-min"),
    random,
  )) {
    progress(`one switch: ${server.name}`);
    for (let i = 0; i < options.warmup; i++) await timedSwitch(server);
    const { p50, outsideProviderP50 } = await loneSwitchRuns(() => timedSwitch(server), options);
    results.push({ name: server.name, latencyMs: options.latencyMs, p50, outsideProviderP50 });
  }
  return results;
}
