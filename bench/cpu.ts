/**
 * `npm run bench:cpu` (about 12 minutes on 2 × AMD EPYC, builds included): step 4 of `npm run bench` alone, CPU
 * per switch of its six servers (or of those BENCH_CPU_SERVERS names) with its verdicts, for a change to the
 * switch's path measured in minutes instead of a quarter of an hour. Nothing is written: the committed figures
 * come from a full run. `BENCH_SEED` fixes the order; `--quick` is a smoke run.
 */
import { createDb } from "../db/connection";
import { prepareDatabase } from "../db/prepare";
import { seededRandom } from "../lib/provider-sim/chaos";
import { startApp } from "../test/harness/app-server";
import { databaseFor } from "../test/harness/databases";
import { cpuServersNamed } from "./app-cpu";
import type { RunningServer } from "./cpu-servers";
import { cpuStep } from "./cpu-step";
import { appEnv, planFor } from "./plan";
import { cpuTables, printVerdicts } from "./report/tables";
import { checkCpuTargets } from "./report/targets";

const plan = planFor(process.argv.includes("--quick"));
const seed = Number(process.env.BENCH_SEED ?? Date.now() % 100_000);
const progress = (note: string) => process.stderr.write(`${note}\n`);
const servers = cpuServersNamed();
const databaseUrl = await prepareDatabase(databaseFor("bench-cpu"), { fresh: true });
const { db } = createDb(databaseUrl, 2);
const started: RunningServer[] = [];
try {
  const app = await startApp({ databaseUrl, port: Number(process.env.BENCH_APP_PORT ?? 3214), env: appEnv });
  started.push(app);
  const results = await cpuStep(app, databaseUrl, db, started, {
    plan,
    random: seededRandom(seed),
    progress,
    only: servers,
  });
  cpuTables(results);
  printVerdicts(checkCpuTargets(results));
  console.log(`seed ${seed}`);
} finally {
  for (const server of started.reverse()) await server.stop();
  await db.destroy();
}
