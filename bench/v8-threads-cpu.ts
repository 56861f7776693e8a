/**
 * `npx tsx bench/v8-threads-cpu.ts` (after `npm run bench`'s builds): what runs on a server's threads other than
 * its main one (which no V8 profile sees), and what V8's thread pool costs. The lab off started as usual (Node's
 * pool of 4 platform workers for V8's collector and compiler), with a pool of 2 and of 1 (`--v8-pool-size`), with
 * the collector on the main thread (`--single-threaded-gc`: what the workers still do is the compiler's), with
 * the compiler there too (`--no-concurrent-recompilation`), and with V8's `--single-threaded` (no background
 * threads); next-min as usual and single-threaded. All eight take turns wave by wave in a seeded order
 * (app-cpu.ts), 64 users switching at once. Then each thread's CPU over the whole run (warm-up included), in the
 * order the threads were created.
 */
import { createDb } from "../db/connection";
import { prepareDatabase } from "../db/prepare";
import { seededRandom } from "../lib/provider-sim/chaos";
import { startApp } from "../test/harness/app-server";
import { databaseFor } from "../test/harness/databases";
import { appClient } from "../test/harness/http-client";
import { providerFor } from "../test/harness/provider";
import { appCpu, cpuServer } from "./app-cpu";
import { startNextFixture } from "./cpu-servers";
import { appEnv, serverWarmupWaves, scalingLatencyMs } from "./plan";
import { threadsCpuMs } from "./process-cpu";
import { spread } from "./report/results";

const seed = Number(process.env.BENCH_SEED ?? Date.now() % 100_000);
const port = Number(process.env.BENCH_PROFILE_PORT ?? 3224);
const progress = (note: string) => process.stderr.write(`${note}\n`);
const usual: string[] = [];
const singleThreaded = ["--single-threaded"];
const labOffWays = [
  usual,
  ["--v8-pool-size=2"],
  ["--v8-pool-size=1"],
  ["--single-threaded-gc"],
  ["--single-threaded-gc", "--no-concurrent-recompilation"],
  singleThreaded,
];
const nextMinWays = [usual, singleThreaded];
const wayName = (nodeOptions: string[]) => (nodeOptions.length ? nodeOptions.join(" ") : "usual");

const databaseUrl = await prepareDatabase(databaseFor("bench-single-threaded"), { fresh: true });
const { db } = createDb(databaseUrl, 2);
const providerUrl = await providerFor(databaseUrl);
// The lab's own client sets the provider's latency: an app with the lab on, not measured.
const lab = await startApp({ databaseUrl, port, env: appEnv });
const started = await Promise.all([
  ...labOffWays.map(async (nodeOptions, index) => ({
    name: `lab off, ${wayName(nodeOptions)}`,
    app: await startApp({ databaseUrl, port: port + 1 + index, env: { ...appEnv, LAB_ENABLED: "false" }, nodeOptions }),
    isTheApp: true,
  })),
  ...nextMinWays.map(async (nodeOptions, index) => ({
    name: `next-min, ${wayName(nodeOptions)}`,
    app: await startNextFixture("next-min", {
      databaseUrl,
      providerUrl,
      port: port + 10 + index,
      poolSize: 16,
      nodeOptions,
    }),
    isTheApp: false,
  })),
]);
try {
  const servers = started.map(({ name, app, isTheApp }) => cpuServer(name, app, isTheApp));
  const before = new Map(servers.map((server) => [server.name, threadsCpuMs(server.pid)]));
  const loads = [{ users: 64, switchesEach: 1, readsPageFirst: false, waves: 15 }];
  const options = { loads, warmupWaves: serverWarmupWaves, latencyMs: scalingLatencyMs, poolSize: 16, restMs: 5_000 };
  const results = await appCpu(
    servers,
    db,
    appClient(lab.baseUrl),
    { ...options, random: seededRandom(seed) },
    progress,
  );
  console.log(`CPU per switch at K = 64 (ms, median [min–max] of waves; seed ${seed}):`);
  console.table(
    results.map((each) => ({
      server: each.name,
      "all threads": spread(each.cpuMsPerSwitch),
      "main thread": spread(each.mainThreadMsPerSwitch),
    })),
  );
  console.log("Each thread's CPU over the whole run (ms; main first, then in the order they were created):");
  for (const server of servers) {
    const earlier = new Map(before.get(server.name)!.map((each) => [each.thread, each.cpuMs]));
    const used = threadsCpuMs(server.pid).map((each) => Math.round(each.cpuMs - (earlier.get(each.thread) ?? 0)));
    console.log(`${server.name}: ${used.join(" ")}`);
  }
} finally {
  for (const { app } of started) await app.stop();
  await lab.stop();
  await db.destroy();
}
