import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { prepareDatabase } from "../../db/prepare";
import { startApp } from "../../test/harness/app-server";
import { databaseFor } from "../../test/harness/databases";
import { rowsOf, tableOf } from "./report";
import {
  actorCounts,
  appPort,
  poolSize,
  providerLatencyMs,
  resultsFile,
  trials,
  trialsFile,
  type Trial,
} from "./settings";

/** The app on a fresh database; once every trial ran, the table on the terminal and in bench/results/. */
export default async function globalSetup(): Promise<() => Promise<void>> {
  mkdirSync(path.dirname(trialsFile), { recursive: true });
  writeFileSync(trialsFile, "");
  const databaseUrl = await prepareDatabase(databaseFor("bench_race"), { fresh: true });
  const app = await startApp({ databaseUrl, port: appPort });
  const startedAt = new Date();
  const loadBefore = os.loadavg();
  return async () => {
    await app.stop();
    const recorded = readFileSync(trialsFile, "utf8").trim().split("\n").filter(Boolean);
    const rows = rowsOf(recorded.map((line) => JSON.parse(line) as Trial));
    const machine = {
      cpus: os.cpus().length,
      // The machine may be shared: its load before and after say whether the figures are load-bound.
      loadAverage: { before: loadBefore, after: os.loadavg() },
    };
    const settings = { actorCounts, trials, providerLatencyMs, poolSize, strategy: "none" };
    const run = { startedAt: startedAt.toISOString(), endedAt: new Date().toISOString(), machine, settings, rows };
    writeFileSync(resultsFile, `${JSON.stringify(run, null, 2)}\n`);
    console.log(`\n${tableOf(rows)}\n`);
    console.log(
      `provider latency ${providerLatencyMs} ms, pool ${poolSize}, strategy none; ${machine.cpus} cores, load average ` +
        `${loadBefore.map((load) => load.toFixed(1)).join(" ")} before, ` +
        `${machine.loadAverage.after.map((load) => load.toFixed(1)).join(" ")} after; ${resultsFile}`,
    );
  };
}
