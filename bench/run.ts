/**
 * `npm run bench` (about 32 min on 2 cores, builds included) or `npm run bench -- --quick` (a smoke run, its
 * results in bench/results/quick.json): the lease against what the machine allows, and each strategy's cost
 * as load grows, in one run on one database (plan.ts says how much of each).
 *
 * 1. The lease library straight on PostgreSQL: acquire + release against two bare UPDATEs and the same
 *    statements as raw SQL; N acquirers at once on one row (lease-micro.ts).
 * 2. Over HTTP against `next start` (http-load.ts), provider latency L fixed, no jitter: one switch alone
 *    per strategy, the strategies taking turns; the provider alone, K clients making a switch's two calls at
 *    once (provider-alone.ts); K users switching at once for each pool size P; a bystander's reads while K
 *    users switch; two app instances on one database, each user clicking on both.
 * 3. Clicks (clicks.ts): 3 users clicking together and 30 clicks at once from one user, on one instance and
 *    on two behind HAProxy; K = 64 users at once on the two behind HAProxy too.
 * 4. CPU per switch (app-cpu.ts): the app with the lab on and off, the product's switch outside Next.js,
 *    a minimal Next.js route (`next-min`) and the machine's floor (`bare`), at K = 64 and K = 1, and a page
 *    read plus a switch; each server's own processes read from /proc, net of their rate at rest. Then a lone
 *    switch on each, as in 2. Then K at once at each P, as in 2, and 30 clicks at once, as in 3, on the app and
 *    on the floors beside it (next-bare, bare, with the same pool), taking turns wave by wave (floor-waves.ts):
 *    what of a wave's wall time is no code of ours; and a bystander's reads, as in 2, on the app and next-bare
 *    taking turns (floor-bystander.ts).
 *    `npm run bench:profile` says where it goes.
 *
 * Every measured strategy is warmed up first, the order of strategies is shuffled (seeded, printed),
 * figures are repeated and reported as median [min–max] over repetitions, p95 only from ≥ 200 samples and
 * p99 from ≥ 1,000, and ratios are taken side by side within a run. Results: a table on the terminal,
 * bench/results/latest.json (with every target's verdict), and the SVG charts in bench/results/.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { sql, type Kysely } from "kysely";
import { createDb } from "../db/connection";
import { prepareDatabase } from "../db/prepare";
import type { Database } from "../db/schema";
import { seededRandom } from "../lib/provider-sim/chaos";
import { startApp, type RunningApp } from "../test/harness/app-server";
import { benchSystemParts, ensureSystemParts } from "../scripts/parts/system-parts";
import { startBalancedPair } from "../test/harness/balanced-pair";
import { databaseFor } from "../test/harness/databases";
import { appClient } from "../test/harness/http-client";
import { providerFor } from "../test/harness/provider";
import { cpuServer, warmUp } from "./app-cpu";
import { clickShapes, clickWaves, type ClickKind, type ClicksResult } from "./clicks";
import type { RunningServer } from "./cpu-servers";
import { cpuStep } from "./cpu-step";
import {
  bystanderReads,
  freshLab,
  predictedWaveTurns,
  scalingWaves,
  singleSwitches,
  twoInstances,
  type WaveResult,
} from "./http-load";
import { contentionBench, leaseMicrobench } from "./lease-micro";
import { appEnv, bystanderPoolSize, planFor, scalingLatencyMs } from "./plan";
import { providerAlone } from "./provider-alone";
import { writeCharts } from "./report/result-charts";
import { roundTripInventory } from "./report/round-trips";
import { runContext } from "./report/run-context";
import { printTables } from "./report/tables";
import { checkTargets } from "./report/targets";
import { round, shuffled } from "./stats";

const quick = process.argv.includes("--quick");
const plan = planFor(quick);
const seed = Number(process.env.BENCH_SEED ?? Date.now() % 100_000);
const random = seededRandom(seed);
const resultsDir = path.join(import.meta.dirname, "results");
const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

const runStarted = performance.now();
function progress(note: string): void {
  const line = `[${((performance.now() - runStarted) / 1000).toFixed(0).padStart(3)} s] ${note}`;
  if (process.stderr.isTTY) process.stderr.write(`\r${line.padEnd(100).slice(0, 100)}`);
  else process.stderr.write(`${line}\n`);
}

/** 1. The library on PostgreSQL, before any app runs on this database. */
async function libraryStep(databaseUrl: string) {
  const micro = await leaseMicrobench(databaseUrl, { ...plan.micro, random }, progress);
  const contention = [];
  for (const acquirers of plan.contention.acquirers)
    contention.push(await contentionBench(databaseUrl, { ...plan.contention, acquirers }, progress));
  return { micro, contention };
}

/** Apps just started, warmed up before a step measures them; the lab's client is the first app's. */
const warmedUp = (apps: RunningApp[], labApp: RunningApp, db: Kysely<Database>) =>
  warmUp(
    apps.map((each) => cpuServer(`app on ${each.baseUrl}`, each, true)),
    db,
    appClient(labApp.baseUrl),
    { ...plan.warmUp, latencyMs: scalingLatencyMs, poolSize: 16 },
    progress,
  );

/** The provider alone at the lone switch's L (K = 1) and at the waves' (every K they measure). */
async function providerAloneStep(app: RunningApp, providerUrl: string, db: Kysely<Database>) {
  const at = async (latencyMs: number, userCounts: number[]) => {
    const users = await freshLab(appClient(app.baseUrl), db, Math.max(...userCounts), {
      strategy: "none",
      poolSize: 4,
      latencyMs,
    });
    return providerAlone(providerUrl, users, { ...plan.providerAlone, latencyMs, userCounts }, progress);
  };
  return [...(await at(plan.single.latencyMs, [1])), ...(await at(scalingLatencyMs, plan.scaling.userCounts))];
}

/**
 * 2. One instance over HTTP: a lone switch, the provider alone, K at once, the bystander; then two instances on
 * one database.
 */
async function httpStep(app: RunningApp, second: () => Promise<RunningApp>, db: Kysely<Database>, providerUrl: string) {
  const [baseUrl, appPid] = [app.baseUrl, app.process.pid];
  const single = await singleSwitches(baseUrl, db, { ...plan.single, appPid, random }, progress);
  const alone = await providerAloneStep(app, providerUrl, db);
  const scaling: WaveResult[] = [];
  for (const strategy of shuffled(plan.scaling.strategies, random)) {
    // A wave of ⌈K/P⌉ > 4 pool turns is itself a long serial run (up to 32 × 2L): once is enough.
    const repetitionsFor = (users: number, poolSize: number) =>
      predictedWaveTurns(strategy, users, poolSize) > 4 ? 1 : 3;
    const options = { ...plan.scaling, strategy, latencyMs: scalingLatencyMs, repetitionsFor, appPids: [appPid!] };
    scaling.push(...(await scalingWaves(baseUrl, db, options, progress)));
  }
  const reads = (strategy: "lease" | "transaction", users: number) =>
    bystanderReads(
      baseUrl,
      db,
      { ...plan.bystander, strategy, users, poolSize: bystanderPoolSize, latencyMs: scalingLatencyMs },
      progress,
    );
  // The idle baseline three times (before each strategy's series and after both): its median p99 is the
  // reference, as a single idle run's tail is as noisy as a loaded one's.
  const bystander = [];
  for (const strategy of shuffled(["lease", "transaction"] as const, random)) {
    bystander.push(await reads("lease", 0));
    for (const users of plan.bystander.userCounts[strategy]) bystander.push(await reads(strategy, users));
  }
  bystander.push(await reads("lease", 0));
  progress("starting a second app instance on the same database");
  const other = await second();
  await warmedUp([other], app, db);
  const options = { ...plan.twoInstances, latencyMs: scalingLatencyMs };
  const pair = await twoInstances([baseUrl, other.baseUrl], db, options, progress);
  await other.stop();
  return { single, providerAlone: alone, scaling, bystander, twoInstances: pair };
}

/** 3. Clicks on one instance, then clicks and K = 64 on two behind HAProxy (the other apps idle meanwhile). */
async function clicksStep(app: RunningApp, databaseUrl: string, db: Kysely<Database>) {
  const kinds: ClickKind[] = ["3 users together", "30 clicks at once"];
  const clicks: ClicksResult[] = [];
  const options = { ...plan.clicks, latencyMs: scalingLatencyMs, poolSize: 16 };
  for (const kind of kinds)
    clicks.push(
      await clickWaves(app.baseUrl, db, { ...options, kind, instances: 1, appPids: [app.process.pid!] }, progress),
    );
  progress("starting two instances behind HAProxy");
  const balancerPort = port("BENCH_BALANCER_PORT", 3226);
  const pair = await startBalancedPair({ databaseUrl, balancerPort, env: appEnv });
  const balanced: WaveResult[] = [];
  try {
    await warmedUp(pair.apps, app, db);
    const appPids = pair.apps.map((each) => each.process.pid!);
    for (const kind of kinds)
      clicks.push(await clickWaves(pair.balancerUrl, db, { ...options, kind, instances: 2, appPids }, progress));
    for (const strategy of shuffled(plan.balanced.strategies, random)) {
      const waves = { ...plan.balanced, strategy, latencyMs: scalingLatencyMs, repetitionsFor: () => 3, appPids };
      balanced.push(...(await scalingWaves(pair.balancerUrl, db, { ...waves, instances: 2 }, progress)));
    }
  } finally {
    await pair.stop();
  }
  return { clicks, balanced };
}

// Checked first: the run needs HAProxy only after minutes of measuring.
const missingParts = ensureSystemParts(undefined, progress, { parts: benchSystemParts, neededBy: "npm run bench" });
if (missingParts) {
  console.error(missingParts);
  process.exit(1);
}
const databaseUrl = await prepareDatabase(databaseFor("bench"), { fresh: true });
const { db } = createDb(databaseUrl, 2);
const postgresVersion = (await sql<{ version: string }>`SELECT version()`.execute(db)).rows[0]!.version;
const context = runContext();
const started: RunningServer[] = [];
try {
  const library = await libraryStep(databaseUrl);
  const app = await startApp({ databaseUrl, port: port("BENCH_APP_PORT", 3214), env: appEnv });
  started.push(app);
  await warmedUp([app], app, db);
  const second = () => startApp({ databaseUrl, port: port("BENCH_SECOND_APP_PORT", 3219), env: appEnv });
  const http = await httpStep(app, second, db, await providerFor(databaseUrl));
  const { clicks, balanced } = await clicksStep(app, databaseUrl, db);
  // Step 2's K at every P of it, and step 3's storm at its P.
  const floorLoads = [
    ...plan.scaling.poolSizes.flatMap((poolSize) =>
      plan.scaling.userCounts.map((users) => ({ users, clicksEach: 1, poolSize })),
    ),
    ...clicks
      .filter((each) => each.kind === "30 clicks at once" && each.instances === 1)
      .map(({ poolSize }) => ({ ...clickShapes["30 clicks at once"], poolSize })),
  ];
  const floorWaves = { loads: floorLoads, ...plan.floorWaves };
  const { reads, readEveryMs, userCounts } = plan.bystander;
  const floorBystander = { userCounts: userCounts.lease, reads, readEveryMs, poolSize: bystanderPoolSize };
  const cpu = await cpuStep(app, databaseUrl, db, started, { plan, random, progress, floorWaves, floorBystander });
  const results = {
    date: new Date().toISOString(),
    mode: quick ? "quick" : "full",
    seed,
    durationSeconds: round((performance.now() - runStarted) / 1000, 1),
    ...context.finish(postgresVersion),
    settings: { plan, scalingLatencyMs, bystanderPoolSize, appEnv },
    ...library,
    ...http,
    clicks,
    balanced,
    ...cpu,
    roundTrips: roundTripInventory,
  };
  const targets = checkTargets(results, scalingLatencyMs);
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, quick ? "quick.json" : "latest.json");
  const rounded = (_: string, value: unknown) => (typeof value === "number" ? round(value) : value);
  writeFileSync(file, JSON.stringify({ ...results, targets }, rounded, 2) + "\n");
  if (!quick) writeCharts(results, resultsDir, scalingLatencyMs);
  process.stderr.write("\n");
  printTables(results, targets);
  console.log(`${path.relative(process.cwd(), file)} written in ${results.durationSeconds} s (seed ${seed}).`);
} finally {
  for (const server of started.reverse()) await server.stop();
  await db.destroy();
}
