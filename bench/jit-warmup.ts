/**
 * `npx tsx bench/jit-warmup.ts` (after `npm run bench`'s builds): how many waves a freshly started server needs
 * before its CPU per switch stops falling, which sets `serverWarmupWaves` (plan.ts). The lab off and next-min,
 * each as usual and with V8's collector on the main thread (`--single-threaded-gc`: what its other threads still
 * do is then the optimising compiler's work), run 70 waves of 64 users switching at once from their start, in
 * blocks of 10, taking turns wave by wave in a seeded order (app-cpu.ts). Per block: CPU per switch (median
 * [min–max] of its waves) and the median of its waves' CPU per switch off the main thread, both net of rest; for
 * the lab off with its collector on the main thread also the Turbofan compiles V8 reports (`--trace-opt`) over
 * the block (its sign-ins and rests included). Printing them costs that server a little: it is named "traced".
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
import { appEnv, scalingLatencyMs } from "./plan";
import { repeated } from "./stats";
import { spread } from "./report/results";

const seed = Number(process.env.BENCH_SEED ?? Date.now() % 100_000);
const port = Number(process.env.BENCH_PROFILE_PORT ?? 3224);
const blocks = 7;
const wavesPerBlock = 10;
const users = 64;
const collectorOnMain = ["--single-threaded-gc"];
const labOff = { ...appEnv, LAB_ENABLED: "false" };

const databaseUrl = await prepareDatabase(databaseFor("bench-jit-warmup"), { fresh: true });
const { db } = createDb(databaseUrl, 2);
const providerUrl = await providerFor(databaseUrl);
// The lab's own client sets the provider's latency: an app with the lab on, not measured.
const lab = await startApp({ databaseUrl, port, env: appEnv });
const traced = await startApp({
  databaseUrl,
  port: port + 2,
  env: labOff,
  nodeOptions: [...collectorOnMain, "--trace-opt"],
});
const started = [
  { name: "lab off", app: await startApp({ databaseUrl, port: port + 1, env: labOff }), isTheApp: true },
  { name: "lab off, collector on main, traced", app: traced, isTheApp: true },
  {
    name: "next-min",
    app: await startNextFixture("next-min", { databaseUrl, providerUrl, port: port + 10, poolSize: 16 }),
    isTheApp: false,
  },
  {
    name: "next-min, collector on main",
    app: await startNextFixture("next-min", {
      databaseUrl,
      providerUrl,
      port: port + 11,
      poolSize: 16,
      nodeOptions: collectorOnMain,
    }),
    isTheApp: false,
  },
];
let compiles = 0;
let unfinishedLine = "";
traced.process.stdout!.on("data", (chunk: Buffer) => {
  const lines = (unfinishedLine + chunk.toString()).split("\n");
  unfinishedLine = lines.pop()!;
  compiles += lines.filter((line) => line.startsWith("[completed compiling")).length;
});
try {
  const servers = started.map(({ name, app, isTheApp }) => cpuServer(name, app, isTheApp));
  const random = seededRandom(seed);
  const rows = [];
  for (let block = 1; block <= blocks; block++) {
    const compilesBefore = compiles;
    const loads = [{ users, switchesEach: 1, readsPageFirst: false, waves: wavesPerBlock }];
    const options = { loads, warmupWaves: 0, latencyMs: scalingLatencyMs, poolSize: 16, restMs: 5_000, random };
    const results = await appCpu(servers, db, appClient(lab.baseUrl), options, () => {});
    const row: Record<string, string | number> = {
      waves: `${block * wavesPerBlock - wavesPerBlock + 1}–${block * wavesPerBlock}`,
    };
    for (const { name, cpuMsPerSwitch, mainThreadMsPerSwitch } of results) {
      // Each wave's, net of rest like the whole: all threads less the main one.
      const offMain = repeated(cpuMsPerSwitch.runs.map((all, wave) => all - mainThreadMsPerSwitch.runs[wave]!));
      row[name] = `${spread(cpuMsPerSwitch)}, off main ${offMain.median.toFixed(2)}`;
    }
    row["Turbofan compiles"] = compiles - compilesBefore;
    rows.push(row);
    process.stderr.write(`block ${block}/${blocks}\n`);
  }
  console.log(`CPU per switch at K = ${users} from a server's start (ms; seed ${seed}):`);
  console.table(rows);
} finally {
  for (const { app } of started) await app.stop();
  await lab.stop();
  await db.destroy();
}
