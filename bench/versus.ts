/**
 * `npx tsx bench/versus.ts <other checkout> [--lab]` (both built with `npm run build`, each with its own
 * `npm ci`): this checkout's app against another's, e.g. the commit before a change (`git worktree add
 * ../before HEAD~1`), in one run on one database and provider. `npx tsx bench/versus.ts --node-options "<options>"`
 * instead: this checkout's app against itself run with those options for node besides (after the project's own
 * `serverNodeOptions`, so they override them: e.g. `--max-semi-space-size=16`, V8's own). Both apps (the lab
 * off, or on with `--lab`) take turns wave by wave in a seeded order (app-cpu.ts, every app warmed 40 waves
 * first): K = 64 users at once, and one user reading the page then switching. On this shared machine two full
 * runs of the same code differ by more than a change of a millisecond, so a change is judged on the same round's
 * waves: the other's CPU per switch less this one's, round by round. Nothing is written. `BENCH_SEED` fixes the
 * order; `WAVES` (default 15); `IDLE_MS` pauses that long before each wave (default 0), as `npm run bench`'s five
 * servers' turns leave each idle for seconds.
 */
import path from "node:path";
import { createDb } from "../db/connection";
import { prepareDatabase } from "../db/prepare";
import { seededRandom } from "../lib/provider-sim/chaos";
import { startApp, type RunningApp } from "../test/harness/app-server";
import { databaseFor } from "../test/harness/databases";
import { appClient } from "../test/harness/http-client";
import { appCpu, cpuServer } from "./app-cpu";
import { scalingLatencyMs, serverWarmupWaves } from "./plan";
import { spread } from "./report/results";
import { repeated } from "./stats";

const [first, second] = process.argv.slice(2);
if (!first || (first === "--node-options" && !second)) {
  console.error('usage: npx tsx bench/versus.ts <other checkout, built> | --node-options "<options>" [--lab]');
  process.exit(2);
}
const otherNodeOptions = first === "--node-options" ? second!.split(" ").filter(Boolean) : [];
const otherName = first === "--node-options" ? `this checkout with ${second}` : first;
const lab = process.argv.includes("--lab");
const waves = Number(process.env.WAVES ?? 15);
const idleBeforeWaveMs = Number(process.env.IDLE_MS ?? 0);
const seed = Number(process.env.BENCH_SEED ?? Date.now() % 100_000);
const progress = (note: string) => process.stderr.write(`${note}\n`);

const startOther: typeof startApp =
  first === "--node-options"
    ? (options) => startApp({ ...options, nodeOptions: otherNodeOptions })
    : ((await import(path.resolve(first, "test/harness/app-server.ts"))) as { startApp: typeof startApp }).startApp;
const databaseUrl = await prepareDatabase(databaseFor("bench-versus"), { fresh: true });
const { db } = createDb(databaseUrl, 2);
const env = { DB_POOL_SIZE: "16", ...(lab ? {} : { LAB_ENABLED: "false" }) };
const started: RunningApp[] = [];
try {
  // The lab's client (settings, reset, audit) is an app of this checkout's with the lab on.
  const labApp = await startApp({ databaseUrl, port: 3431, env: { DB_POOL_SIZE: "16" } });
  started.push(labApp);
  started.push(await startOther({ databaseUrl, port: 3432, env }));
  started.push(await startApp({ databaseUrl, port: 3433, env }));
  const servers = [cpuServer("other", started[1]!, true), cpuServer("this", started[2]!, true)];
  const loads = [
    { users: 64, switchesEach: 1, readsPageFirst: false, waves },
    { users: 1, switchesEach: 10, readsPageFirst: true, waves },
  ];
  const options = {
    loads,
    warmupWaves: serverWarmupWaves,
    latencyMs: scalingLatencyMs,
    poolSize: 16,
    restMs: 5_000,
    idleBeforeWaveMs,
  };
  const results = await appCpu(
    servers,
    db,
    appClient(labApp.baseUrl),
    { ...options, random: seededRandom(seed) },
    progress,
  );
  console.log(`${otherName} against this checkout, the lab ${lab ? "on" : "off"} (seed ${seed}):`);
  console.table(
    loads.map((_, index) => {
      const [theirs, ours] = results.slice(index * 2, index * 2 + 2);
      const paired = theirs!.cpuMsPerSwitch.runs.map((each, round) => each - ours!.cpuMsPerSwitch.runs[round]!);
      return {
        load: ours!.load,
        "other (ms per switch)": spread(theirs!.cpuMsPerSwitch),
        "this (ms per switch)": spread(ours!.cpuMsPerSwitch),
        "other − this, round by round": spread(repeated(paired)),
        "rounds this was cheaper": `${paired.filter((each) => each > 0).length} of ${paired.length}`,
        "answers (other, this)": `${JSON.stringify(theirs!.statuses)}, ${JSON.stringify(ours!.statuses)}`,
      };
    }),
  );
} finally {
  for (const app of started.reverse()) await app.stop();
  await db.destroy();
}
