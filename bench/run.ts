/**
 * `npm run bench`: the five strategies side by side in one run, on one app instance and one database.
 * Three users each fire concurrent switches while a fourth user reads their own page every 50 ms (open
 * loop: a read is sent on schedule whether or not the last one answered, so a stalled pool shows as
 * slow reads instead of as fewer reads). The report shows what each strategy costs the bystander and
 * what it leaves at the provider, as ratios to the lease measured in the same run.
 */
import { prepareDatabase } from "../db/prepare";
import { startApp } from "../test/harness/app-server";
import { databaseFor } from "../test/harness/databases";
import { appClient } from "../test/harness/http-client";

const strategies = ["lease", "transaction", "advisory", "optimistic", "none"] as const;
const switchers = {
  ada: ["github|8812", "auth0|ada-email", "apple|001122.ada"],
  grace: ["google-oauth2|77", "auth0|grace-email"],
  katherine: ["google-oauth2|2020", "github|3030"],
};
const switchesPerUser = 8;
const settings = { poolSize: 4, leaseTtlMs: 10_000, provider: { latencyMs: 200, jitterMs: 50 } };

const readEveryMs = 50;

interface Result {
  strategy: string;
  wallMs: number;
  reads: number;
  readP50: number;
  readP95: number;
  readMax: number;
  statuses: Record<string, number>;
  consistent: boolean;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;

async function measure(baseUrl: string, strategy: string): Promise<Result> {
  const lab = appClient(baseUrl);
  await lab.reset();
  await lab.configure({ ...settings, strategy });
  const bystander = await lab.signedIn("alan");
  const clients = await Promise.all(Object.keys(switchers).map((userId) => lab.signedIn(userId)));

  const started = performance.now();
  const switching = Promise.all(
    Object.entries(switchers).flatMap(([userId, targets], index) =>
      Array.from({ length: switchesPerUser }, (_, n) => clients[index]!.promote(userId, targets[n % targets.length]!)),
    ),
  );
  const readTimes: number[] = [];
  const reads: Promise<void>[] = [];
  const reader = setInterval(() => {
    const before = performance.now();
    reads.push(bystander.get("/api/users/alan").then(() => void readTimes.push(performance.now() - before)));
  }, readEveryMs);
  const answers = await switching;
  const wallMs = performance.now() - started;
  clearInterval(reader);
  await Promise.all(reads);
  const statuses: Record<string, number> = {};
  for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
  readTimes.sort((a, b) => a - b);
  return {
    strategy,
    wallMs,
    reads: readTimes.length,
    readP50: percentile(readTimes, 0.5),
    readP95: percentile(readTimes, 0.95),
    readMax: readTimes.at(-1) ?? 0,
    statuses,
    consistent: (await lab.audit()).consistent,
  };
}

const databaseUrl = await prepareDatabase(databaseFor("bench"), { fresh: true });
const app = await startApp({ databaseUrl, port: Number(process.env.BENCH_APP_PORT ?? 3214) });
try {
  const results: Result[] = [];
  for (const strategy of strategies) results.push(await measure(app.baseUrl, strategy));
  const lease = results[0]!;
  console.log(
    `\n${switchesPerUser} concurrent switches for each of 3 users, provider ${settings.provider.latencyMs} ± ${settings.provider.jitterMs} ms per call, pool of ${settings.poolSize}; a 4th user reads every ${readEveryMs} ms meanwhile.\n`,
  );
  console.table(
    results.map((result) => ({
      strategy: result.strategy,
      "bystander read p50 (ms)": Math.round(result.readP50),
      "p50 vs lease": `${(result.readP50 / lease.readP50).toFixed(1)}×`,
      "bystander read p95 (ms)": Math.round(result.readP95),
      "p95 vs lease": `${(result.readP95 / lease.readP95).toFixed(1)}×`,
      "slowest read (ms)": Math.round(result.readMax),
      "all switches answered (ms)": Math.round(result.wallMs),
      "answered vs lease": `${(result.wallMs / lease.wallMs).toFixed(1)}×`,
      "switch answers": Object.entries(result.statuses)
        .map(([status, count]) => `${count}×${status}`)
        .join(" "),
      "provider consistent": result.consistent ? "yes" : "NO",
    })),
  );
} finally {
  await app.stop();
}
