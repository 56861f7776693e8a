/**
 * `npx tsx bench/gzip-cpu.ts` (after `npm run build`): what gzip costs the app per switch, measured both
 * ways on the same servers (issue 28). The app with the lab on and off, each reached two ways: its clients
 * asking for gzip (`Accept-Encoding: gzip, deflate`, as browsers and Node's fetch do) or not (`identity`),
 * all four taking turns wave by wave in a seeded order (app-cpu.ts): K = 64 users at once, and one user
 * reading the page then switching. With Next.js's compression off (next.config.ts), both ways cost the same.
 */
import { createDb } from "../db/connection";
import { prepareDatabase } from "../db/prepare";
import { seededRandom } from "../lib/provider-sim/chaos";
import { startApp } from "../test/harness/app-server";
import { databaseFor } from "../test/harness/databases";
import { appClient } from "../test/harness/http-client";
import { appCpu, type CpuServer } from "./app-cpu";
import { appEnv, serverWarmupWaves, scalingLatencyMs } from "./plan";
import { spread } from "./report/results";

const seed = Number(process.env.BENCH_SEED ?? Date.now() % 100_000);
const port = Number(process.env.BENCH_PROFILE_PORT ?? 3224);
const progress = (note: string) => process.stderr.write(`${note}\n`);

const databaseUrl = await prepareDatabase(databaseFor("bench-gzip"), { fresh: true });
const { db } = createDb(databaseUrl, 2);
const labOn = await startApp({ databaseUrl, port, env: appEnv });
const labOff = await startApp({ databaseUrl, port: port + 1, env: { ...appEnv, LAB_ENABLED: "false" } });
try {
  const gzip = await fetch(`${labOn.baseUrl}/api/users`, { headers: { "Accept-Encoding": "gzip, deflate" } });
  console.log(
    `GET /api/users asking for gzip is answered with Content-Encoding: ${gzip.headers.get("content-encoding")}`,
  );
  const ways = { gzip: { "Accept-Encoding": "gzip, deflate" }, identity: { "Accept-Encoding": "identity" } };
  const servers: CpuServer[] = [labOn, labOff].flatMap((app, index) =>
    Object.entries(ways).map(([way, headers]) => ({
      name: `${index === 0 ? "lab on" : "lab off"}, ${way}`,
      baseUrl: app.baseUrl,
      pid: app.process.pid!,
      isTheApp: true,
      servesPage: true,
      headers,
    })),
  );
  const loads = [
    { users: 64, switchesEach: 1, readsPageFirst: false, waves: 7 },
    { users: 1, switchesEach: 10, readsPageFirst: true, waves: 5 },
  ];
  const options = { loads, warmupWaves: serverWarmupWaves, latencyMs: scalingLatencyMs, poolSize: 16, restMs: 5_000 };
  const results = await appCpu(
    servers,
    db,
    appClient(labOn.baseUrl),
    { ...options, random: seededRandom(seed) },
    progress,
  );
  console.log(`CPU per switch (ms, median [min–max] of waves; seed ${seed}):`);
  console.table(
    results.map((each) => ({ server: each.name, load: each.load, "CPU per switch": spread(each.cpuMsPerSwitch) })),
  );
} finally {
  await labOff.stop();
  await labOn.stop();
  await db.destroy();
}
