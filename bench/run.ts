/**
 * `npm run bench` (≤ 5 min on 2 cores) or `npm run bench -- --quick` (≤ 1 min, a smoke run): the lease
 * against what the hardware allows, and each strategy's cost as load grows, in one run on one database.
 *
 * 1. The lease library straight on PostgreSQL: acquire + release against two bare UPDATEs and the same
 *    statements as raw SQL; N acquirers at once on one row (lease-micro.ts).
 * 2. Over HTTP against `next start` (http-load.ts), provider latency L fixed, no jitter: one switch alone
 *    per strategy; K users switching at once for each pool size P; a bystander's reads while K users
 *    switch; two app instances on one database.
 *
 * 3. CPU per switch (app-cpu.ts): K = 64 users at once against the app with the lab on, the app with the
 *    lab off, and the floor (the product's switch behind a bare `node:http` server), each server's own
 *    processes read from /proc, net of their rate at rest. `npm run bench:profile` says where it goes.
 *
 * Every measured strategy is warmed up first, the order of strategies is shuffled (seeded, printed),
 * figures are repeated and reported as median [min–max] over repetitions, p95 only from ≥ 200 samples and
 * p99 from ≥ 1,000, and ratios are taken side by side within a run. Results: a table on the terminal,
 * bench/results/latest.json, and the SVG charts in bench/results/.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { sql } from "kysely";
import { createDb } from "../db/connection";
import { prepareDatabase } from "../db/prepare";
import { startApp, type RunningApp } from "../test/harness/app-server";
import { databaseFor } from "../test/harness/databases";
import { appClient } from "../test/harness/http-client";
import { providerFor } from "../test/harness/provider";
import {
  bystanderReads,
  predictedWaveTurns,
  scalingWaves,
  singleSwitch,
  strategies,
  twoInstances,
  type Strategy,
  type WaveResult,
} from "./http-load";
import { appCpu, startFloor, type CpuServer } from "./app-cpu";
import { contentionBench, leaseMicrobench } from "./lease-micro";
import { writeCharts } from "./report/result-charts";
import { roundTripInventory } from "./report/round-trips";
import { runContext } from "./report/run-context";
import { printTables } from "./report/tables";
import { checkTargets } from "./report/targets";
import { seededRandom } from "../lib/provider-sim/chaos";
import { round, shuffled } from "./stats";

const quick = process.argv.includes("--quick");
const seed = Number(process.env.BENCH_SEED ?? Date.now() % 100_000);
const random = seededRandom(seed);
const resultsDir = path.join(import.meta.dirname, "results");

const plan = quick
  ? {
      micro: { iterations: 200, warmup: 50, repetitions: 3 },
      contention: { acquirers: [10, 50], samples: 200, repetitions: 3 },
      single: { strategies: ["lease", "none"] as Strategy[], latencyMs: 50, samples: 10, repetitions: 3, warmup: 3 },
      scaling: { strategies: ["lease", "none", "transaction"] as Strategy[], userCounts: [1, 4, 16], poolSizes: [4] },
      bystander: { userCounts: { lease: [16], transaction: [16] }, reads: 200, readEveryMs: 20 },
      twoInstances: { users: 4, repetitions: 2 },
      appCpu: { users: 16, waves: 3, restMs: 3_000, warmupWaves: 3 },
    }
  : {
      micro: { iterations: 1_000, warmup: 200, repetitions: 3 },
      contention: { acquirers: [10, 50, 90], samples: 1_000, repetitions: 3 },
      single: { strategies: [...strategies], latencyMs: 50, samples: 15, repetitions: 3, warmup: 5 },
      scaling: {
        // `none` is the lease's reference: what the same switch costs with no lock at all.
        strategies: ["lease", "none", "transaction", "advisory"] as Strategy[],
        userCounts: [1, 4, 16, 64],
        poolSizes: [2, 4, 16],
      },
      // A read every 20 ms: one page read alone takes about 9 ms of the app here (Next.js, the session, the
      // view), so a faster open loop measures the bystander's own queue, not the switches' effect on it (at
      // 6 ms, the idle runs' p99 ranged 40–213 ms). K = 64 under transaction is left out (its queue alone
      // takes 13 s to fill and drain); the chart's curve grows from K = 1 to 16 already.
      bystander: { userCounts: { lease: [1, 4, 16, 64], transaction: [1, 4, 16] }, reads: 1_000, readEveryMs: 20 },
      twoInstances: { users: 16, repetitions: 3 },
      // The servers started for this step warm up first (10 waves of 64): the main app has run thousands
      // of switches by then, and code the JIT has not yet optimised costs more per call.
      appCpu: { users: 64, waves: 7, restMs: 10_000, warmupWaves: 10 },
    };
const scalingLatencyMs = 200;
const bystanderPoolSize = 4;

let progressNote = "";
const runStarted = performance.now();
function progress(note: string): void {
  progressNote = `[${((performance.now() - runStarted) / 1000).toFixed(0).padStart(3)} s] ${note}`;
  if (process.stderr.isTTY) process.stderr.write(`\r${progressNote.padEnd(100).slice(0, 100)}`);
  else process.stderr.write(`${progressNote}\n`);
}

const databaseUrl = await prepareDatabase(databaseFor("bench"), { fresh: true });
const { db } = createDb(databaseUrl, 2);
const postgresVersion = (await sql<{ version: string }>`SELECT version()`.execute(db)).rows[0]!.version;
const context = runContext();

// 1. The library on PostgreSQL, before any app runs on this database.
const micro = await leaseMicrobench(databaseUrl, { ...plan.micro, random }, progress);
const contention = [];
for (const acquirers of plan.contention.acquirers)
  contention.push(await contentionBench(databaseUrl, { ...plan.contention, acquirers }, progress));

// 2. Over HTTP. Pools start at 16 connections so that the lab's pool size, not the start-up value, rules.
const appEnv = { DB_POOL_SIZE: "16" };
const ports = [
  Number(process.env.BENCH_APP_PORT ?? 3214),
  Number(process.env.BENCH_SECOND_APP_PORT ?? 3219),
  Number(process.env.BENCH_LAB_OFF_PORT ?? 3221),
  Number(process.env.BENCH_FLOOR_PORT ?? 3222),
];
let stopFloor = async (): Promise<void> => undefined;
const apps: RunningApp[] = [await startApp({ databaseUrl, port: ports[0]!, env: appEnv })];
try {
  const baseUrl = apps[0]!.baseUrl;
  const appPid = apps[0]!.process.pid;
  const single = [];
  for (const strategy of shuffled(plan.single.strategies, random))
    single.push(await singleSwitch(baseUrl, db, { ...plan.single, strategy, appPid }, progress));

  const scaling: WaveResult[] = [];
  for (const strategy of shuffled(plan.scaling.strategies, random)) {
    const waves = await scalingWaves(
      baseUrl,
      db,
      {
        ...plan.scaling,
        strategy,
        latencyMs: scalingLatencyMs,
        // A wave of ⌈K/P⌉ > 4 pool turns is itself a long serial run (up to 32 × 2L): once is enough to
        // keep the run under 5 minutes; every other point is repeated three times.
        repetitionsFor: (users, poolSize) => (predictedWaveTurns(strategy, users, poolSize) > 4 ? 1 : 3),
        appPid,
      },
      progress,
    );
    scaling.push(...waves);
  }

  // The idle baseline three times (before each strategy's series and after both): its median p99 is the
  // reference, as a single idle run's tail is as noisy as a loaded one's.
  const idleReads = () =>
    bystanderReads(
      baseUrl,
      db,
      { ...plan.bystander, strategy: "lease", users: 0, poolSize: bystanderPoolSize, latencyMs: scalingLatencyMs },
      progress,
    );
  const bystander = [];
  const bystanderStrategies: ("lease" | "transaction")[] = ["lease", "transaction"];
  for (const strategy of shuffled(bystanderStrategies, random)) {
    bystander.push(await idleReads());
    for (const users of plan.bystander.userCounts[strategy])
      bystander.push(
        await bystanderReads(
          baseUrl,
          db,
          { ...plan.bystander, strategy, users, poolSize: bystanderPoolSize, latencyMs: scalingLatencyMs },
          progress,
        ),
      );
  }
  bystander.push(await idleReads());

  progress("starting a second app instance on the same database");
  apps.push(await startApp({ databaseUrl, port: ports[1]!, env: appEnv }));
  const pair = await twoInstances(
    [apps[0]!.baseUrl, apps[1]!.baseUrl],
    db,
    { ...plan.twoInstances, latencyMs: scalingLatencyMs },
    progress,
  );

  // 3. CPU per switch: the lab on, the lab off and the bare floor, each alone in turn, at rest first.
  progress("starting the app with the lab off, and the floor server");
  const labOff = await startApp({ databaseUrl, port: ports[2]!, env: { ...appEnv, LAB_ENABLED: "false" } });
  apps.push(labOff);
  const floor = await startFloor({
    databaseUrl,
    providerUrl: await providerFor(databaseUrl),
    port: ports[3]!,
    poolSize: Number(appEnv.DB_POOL_SIZE),
  });
  stopFloor = floor.stop;
  const cpuServers: CpuServer[] = [
    { name: "lab on", baseUrl: apps[0]!.baseUrl, pid: apps[0]!.process.pid!, signsIn: true },
    { name: "lab off", baseUrl: labOff.baseUrl, pid: labOff.process.pid!, signsIn: true },
    { name: "floor", baseUrl: `http://127.0.0.1:${ports[3]}`, pid: floor.process.pid!, signsIn: false },
  ];
  const cpu = await appCpu(
    cpuServers,
    db,
    appClient(apps[0]!.baseUrl),
    { ...plan.appCpu, latencyMs: scalingLatencyMs, poolSize: 16, random },
    progress,
  );

  const results = {
    date: new Date().toISOString(),
    mode: quick ? "quick" : "full",
    seed,
    durationSeconds: round((performance.now() - runStarted) / 1000, 1),
    ...context.finish(postgresVersion),
    settings: { plan, scalingLatencyMs, bystanderPoolSize, appEnv },
    micro,
    contention,
    single,
    scaling,
    bystander,
    twoInstances: pair,
    appCpu: cpu,
    roundTrips: roundTripInventory,
  };
  const targets = checkTargets(results, scalingLatencyMs);
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, quick ? "quick.json" : "latest.json");
  writeFileSync(
    file,
    JSON.stringify({ ...results, targets }, (_, value) => (typeof value === "number" ? round(value) : value), 2) + "\n",
  );
  if (!quick) writeCharts(results, resultsDir, scalingLatencyMs);
  process.stderr.write("\n");
  printTables(results, targets);
  console.log(`\n${path.relative(process.cwd(), file)} written in ${results.durationSeconds} s (seed ${seed}).`);
} finally {
  for (const app of apps) await app.stop();
  await stopFloor();
  await db.destroy();
}
