/**
 * `npm run bench:profile`: where a switch's CPU goes, for docs/performance.md's table. Each server (the lab on, the
 * lab off, the switch outside Next.js, next-min, next-bare and bare: bench/app-cpu.ts) runs alone under V8's
 * sampling profiler (`--cpu-prof`) while 64 users switch at once, wave after wave, then while one user switches 10
 * times one after the other (K = 1, where each switch pays the fixed costs alone), and reads the page before each
 * of them (on the servers that serve one); it then stops and writes its profile, and each sample of each load's
 * measured waves is put on the part of the code it was in (cpu-profile.ts). The profiler itself costs some CPU, and
 * it samples wall time: what it books includes the time the main thread waited for a core (beside each load: its
 * CPU and that wait, from /proc), mostly on `writev`. So the shares are the finding; `npm run bench` gives the
 * unprofiled CPU per switch. Results: a table on the terminal and bench/results/profile.json.
 * BENCH_CPU_SERVERS="lab on,lab off" profiles only the servers it names, as for `npm run bench:cpu`.
 */
import { execSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createDb } from "../db/connection";
import { prepareDatabase } from "../db/prepare";
import { seededRandom } from "../lib/provider-sim/chaos";
import { startApp } from "../test/harness/app-server";
import { databaseFor } from "../test/harness/databases";
import { appClient } from "../test/harness/http-client";
import { providerFor } from "../test/harness/provider";
import { appCpu, benchCpuServer, cpuServersNamed, type AppCpuResult, type CpuServerName } from "./app-cpu";
import { startNextFixture, startNodeServer, type RunningServer } from "./cpu-servers";
import { cpuByPart } from "./cpu-profile";
import { serverWarmupWaves } from "./plan";
import { round } from "./stats";

const plan = {
  loads: [
    { users: 64, switchesEach: 1, readsPageFirst: false, waves: 10 },
    { users: 1, switchesEach: 10, readsPageFirst: false, waves: 10 },
    // The servers that serve a user's page (the apps, next-bare): the lone page read + switch target's load.
    { users: 1, switchesEach: 10, readsPageFirst: true, waves: 10 },
  ],
  warmupWaves: serverWarmupWaves,
  latencyMs: 200,
  poolSize: 16,
  restMs: 2_000,
};
const port = Number(process.env.BENCH_PROFILE_PORT ?? 3224);
const labPort = port + 1;

const progress = (note: string) => process.stderr.write(`${note}\n`);
const databaseUrl = await prepareDatabase(databaseFor("bench-profile"), { fresh: true });
const { db } = createDb(databaseUrl, 2);
// The lab's own client sets the provider's latency and resets between servers: an app with the lab on,
// not profiled, on a port of its own.
const labApp = await startApp({ databaseUrl, port: labPort, env: { DB_POOL_SIZE: "16" } });
const lab = appClient(labApp.baseUrl);

/** One of the servers, profiled; the apps with their pool of `plan.poolSize`. */
async function startServer(name: CpuServerName, nodeOptions: string[]): Promise<RunningServer> {
  const options = {
    databaseUrl,
    providerUrl: await providerFor(databaseUrl),
    port,
    poolSize: plan.poolSize,
    nodeOptions,
  };
  if (name === "bare") return startNodeServer("bare-server.ts", options);
  if (name === "outside Next.js") return startNodeServer("switch-outside-next.ts", options);
  if (name === "next-min" || name === "next-bare") return startNextFixture(name, options);
  const env = { DB_POOL_SIZE: String(plan.poolSize), ...(name === "lab off" ? { LAB_ENABLED: "false" } : {}) };
  return startApp({ databaseUrl, port, env, nodeOptions });
}

const results = [];
try {
  for (const name of cpuServersNamed()) {
    const directory = mkdtempSync(path.join(os.tmpdir(), "lease-lock-lab-profile-"));
    const nodeOptions = ["--cpu-prof", `--cpu-prof-dir=${directory}`];
    const server = await startServer(name, nodeOptions);
    let measured: AppCpuResult[];
    try {
      measured = await appCpu([benchCpuServer(name, server)], db, lab, { ...plan, random: seededRandom(1) }, progress);
    } finally {
      // The profile is written as the process ends.
      await server.stop();
    }
    for (const load of measured) {
      const parts = cpuByPart(directory, load.window);
      const profiledMs = [...parts.values()].reduce((sum, each) => sum + each, 0);
      const switches = load.users * load.switchesEach * load.cpuMsPerSwitch.runs.length;
      results.push({
        server: name,
        load: load.load,
        switches,
        cpuMsPerSwitch: load.cpuMsPerSwitch,
        mainThreadMsPerSwitch: load.mainThreadMsPerSwitch,
        mainThreadWaitMsPerSwitch: load.mainThreadWaitMsPerSwitch,
        profiledMsPerSwitch: profiledMs / switches,
        parts: [...parts.entries()]
          .sort((a, b) => b[1] - a[1])
          .map(([part, ms]) => ({ part, share: ms / profiledMs, msPerSwitch: ms / switches })),
      });
    }
    rmSync(directory, { recursive: true, force: true });
  }
} finally {
  await labApp.stop();
  await db.destroy();
}

for (const result of results) {
  console.log(
    `\n${result.server}, ${result.load}: ${result.profiledMsPerSwitch.toFixed(2)} ms per switch profiled; main ` +
      `thread's CPU ${result.mainThreadMsPerSwitch.median.toFixed(2)} ms, its wait for a core ` +
      `${result.mainThreadWaitMsPerSwitch.median.toFixed(2)} ms`,
  );
  console.table(
    result.parts.map((each) => ({
      part: each.part,
      share: `${(each.share * 100).toFixed(1)} %`,
      "ms per switch": each.msPerSwitch.toFixed(2),
    })),
  );
}
const file = path.join(import.meta.dirname, "results", "profile.json");
const output = {
  date: new Date().toISOString(),
  commit: execSync("git rev-parse --short HEAD", { encoding: "utf8" }).trim(),
  machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model },
  node: process.version,
  plan,
  results,
};
writeFileSync(file, JSON.stringify(output, (_, value) => (typeof value === "number" ? round(value) : value), 2) + "\n");
console.log(`\n${path.relative(process.cwd(), file)} written.`);
