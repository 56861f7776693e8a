/**
 * `npm run bench:parts` (about 3 min on 2 cores, build included): the lease through the production parts,
 * in one run on one database, beside the same figures straight to PostgreSQL.
 *
 * 1. The lease library, acquire + release, straight to PostgreSQL (its statements named, as the app sends
 *    them) and through PgBouncer in transaction pooling (unnamed: PgBouncer 1.18 keeps no prepared statement
 *    across transactions), in alternating blocks. Both are the same 2 round trips; the pooler adds a hop.
 * 2. Over HTTP (L = 50 ms): a lone switch under `lease` on an instance straight to PostgreSQL, on one whose
 *    pool goes through PgBouncer, and under `redis` (a real redis-server).
 * 3. A bystander's reads (every 20 ms, 1,000 of them) while 16 users switch (L = 200 ms, pool of 4), under
 *    `lease` and `redis`, and idle: neither holds a connection while it calls the provider.
 * 4. Two instances behind one URL (HAProxy, round-robin) against one instance alone: K users switching at
 *    once under `lease` (K = 16 and 64, pool of 16, L = 200 ms), the same figures within 5 % (issue: a lean
 *    product path). The balanced pair's instances are the ones measured alone, one of them straight.
 *
 * Writes bench/results/parts.json with the date, the machine and the commit.
 */
import { randomUUID } from "node:crypto";
import { execSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { createDb } from "../db/connection";
import { prepareDatabase } from "../db/prepare";
import { identityActionLease } from "../lib/switch/users";
import { seededRandom } from "../lib/provider-sim/chaos";
import { findProgram } from "../scripts/parts/part-process";
import { startPgBouncer } from "../scripts/parts/pgbouncer";
import { startRedis } from "../scripts/parts/redis";
import { startApp, type RunningApp } from "../test/harness/app-server";
import { startBalancedPair } from "../test/harness/balanced-pair";
import { databaseFor } from "../test/harness/databases";
import { bystanderReads, scalingWaves, singleSwitches } from "./http-load";
import { acquireOptions, timedInBlocks } from "./lease-micro";
import { distribution, repeated, round, shuffled } from "./stats";

const seed = Number(process.env.BENCH_SEED ?? Date.now() % 100_000);
const random = seededRandom(seed);
const progress = (note: string) => process.stderr.write(`${note}\n`);
const plan = {
  micro: { iterations: 1_000, warmup: 200, repetitions: 3 },
  single: { latencyMs: 50, samples: 15, repetitions: 3, warmup: 5 },
  // A read every 20 ms: one page read alone takes about 9 ms here (Next.js, the session, the view), so a
  // faster open loop would measure the bystander's own queue, not the switches' effect on it.
  bystander: { users: 16, poolSize: 4, latencyMs: 200, reads: 1_000, readEveryMs: 20 },
  balanced: { userCounts: [16, 64], poolSizes: [16], latencyMs: 200, waves: 5 },
};

const directUrl = await prepareDatabase(databaseFor("bench_parts"), { fresh: true });
const pgbouncer = await startPgBouncer(directUrl, Number(process.env.BENCH_PGBOUNCER_PORT ?? 6453));
const redis = await startRedis(Number(process.env.BENCH_REDIS_PORT ?? 6395));
const pooledUrl = pgbouncer.pooledUrl(directUrl);
const { db } = createDb(directUrl, 2);
const apps: RunningApp[] = [];
try {
  // 1. The library, each way on a pool of one connection of its own, as the app's pools would run it.
  const ways = {
    direct: createDb(directUrl, 1, { namedStatements: true }),
    pgbouncer: createDb(pooledUrl, 1, { namedStatements: false }),
  };
  type Way = keyof typeof ways;
  const cycle = (way: Way) => async () => {
    const acquisition = await identityActionLease.acquire(ways[way].db, "ada", acquireOptions(randomUUID()));
    if (!acquisition.acquired) throw new Error(`the ${way} acquire did not win a free row`);
    await acquisition.lease.release();
  };
  const runs = await timedInBlocks(
    { direct: cycle("direct"), pgbouncer: cycle("pgbouncer") },
    { ...plan.micro, random },
    (note) => progress(`lease through PgBouncer: ${note}`),
  );
  await Promise.all(Object.values(ways).map((way) => way.db.destroy()));
  // Each acquire journaled an intent nobody finished: gone before any app (and its reconciler) starts.
  await sql`DELETE FROM switch_journal`.execute(db);
  const perRun = (way: Way, p: "p50" | "p99") => runs[way].map((times) => distribution(times)[p] ?? NaN);
  const ratio = (p: "p50" | "p99") =>
    repeated(perRun("pgbouncer", p).map((value, index) => value / perRun("direct", p)[index]!));
  const micro = {
    roundTripsPerCycle: { direct: 2, pgbouncer: 2 },
    direct: { p50: repeated(perRun("direct", "p50")), p99: repeated(perRun("direct", "p99")) },
    pgbouncer: { p50: repeated(perRun("pgbouncer", "p50")), p99: repeated(perRun("pgbouncer", "p99")) },
    pgbouncerToDirect: { p50: ratio("p50"), p99: ratio("p99") },
  };

  // 2. and 3. Over HTTP: one instance straight to PostgreSQL, one through PgBouncer, both told of the Redis.
  const env = { DB_POOL_SIZE: "16", REDIS_URL: redis.url };
  const ports = [Number(process.env.BENCH_APP_PORT ?? 3214), Number(process.env.BENCH_SECOND_APP_PORT ?? 3219)];
  apps.push(await startApp({ databaseUrl: directUrl, port: ports[0]!, env }));
  apps.push(
    await startApp({ databaseUrl: pooledUrl, port: ports[1]!, env: { ...env, ...pgbouncer.appEnv(directUrl) } }),
  );
  const [direct, pooled] = apps as [RunningApp, RunningApp];
  const lone = async (baseUrl: string, strategy: "lease" | "redis") =>
    (await singleSwitches(baseUrl, db, { ...plan.single, strategies: [strategy], random }, progress))[0]!;
  const single = {
    leaseDirect: await lone(direct.baseUrl, "lease"),
    leaseThroughPgBouncer: await lone(pooled.baseUrl, "lease"),
    redis: await lone(direct.baseUrl, "redis"),
  };
  const bystander = {
    idle: await bystanderReads(direct.baseUrl, db, { ...plan.bystander, strategy: "lease", users: 0 }, progress),
    lease: await bystanderReads(direct.baseUrl, db, { ...plan.bystander, strategy: "lease" }, progress),
    redis: await bystanderReads(direct.baseUrl, db, { ...plan.bystander, strategy: "redis" }, progress),
  };

  // 4. The balanced pair, on the direct database; the other apps are stopped first, to leave it the cores.
  for (const app of apps.splice(0)) await app.stop();
  const pair = await startBalancedPair({
    databaseUrl: directUrl,
    balancerPort: Number(process.env.BENCH_BALANCER_PORT ?? 3226),
  });
  // One wave at a time, alone and behind the balancer taking turns in a seeded order, so that a drift of the
  // machine falls on both alike; each after a fresh lab and a warm-up wave (scalingWaves).
  const wave = async (baseUrl: string, users: number) =>
    (
      await scalingWaves(
        baseUrl,
        db,
        { ...plan.balanced, userCounts: [users], strategy: "lease", repetitionsFor: () => 1 },
        progress,
      )
    )[0]!;
  const balanced = [];
  try {
    for (const users of plan.balanced.userCounts) {
      const walls = { oneInstance: [] as number[], behindBalancer: [] as number[] };
      let consistent = true;
      for (let round = 0; round < plan.balanced.waves; round++) {
        const ways = shuffled(["oneInstance", "behindBalancer"] as const, random);
        for (const way of ways) {
          const result = await wave(way === "oneInstance" ? pair.apps[0]!.baseUrl : pair.balancerUrl, users);
          walls[way].push(result.wallMs.median);
          consistent &&= result.consistent;
        }
      }
      const [oneInstance, behindBalancer] = [repeated(walls.oneInstance), repeated(walls.behindBalancer)];
      balanced.push({
        users,
        oneInstance,
        behindBalancer,
        ratio: behindBalancer.median / oneInstance.median,
        consistent,
      });
    }
  } finally {
    await pair.stop();
  }

  const results = {
    date: new Date().toISOString(),
    seed,
    machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model, memoryGb: round(os.totalmem() / 2 ** 30, 1) },
    commit: execSync("git rev-parse --short HEAD", { encoding: "utf8" }).trim(),
    pgbouncer: execSync(`${findProgram("pgbouncer", "pgbouncer")} --version`, { encoding: "utf8" }).split("\n")[0],
    redis: execSync(`${findProgram("redis-server", "redis-server")} --version`, { encoding: "utf8" }).trim(),
    plan,
    micro,
    single,
    bystander,
    balanced,
  };
  const file = path.join(import.meta.dirname, "results", "parts.json");
  writeFileSync(
    file,
    JSON.stringify(results, (_, value) => (typeof value === "number" ? round(value) : value), 2) + "\n",
  );
  const ms = (value: number | null | undefined) => (value == null ? "–" : `${value.toFixed(2)} ms`);
  console.table({
    "acquire + release, direct": { p50: ms(micro.direct.p50.median), p99: ms(micro.direct.p99.median) },
    "acquire + release, PgBouncer": { p50: ms(micro.pgbouncer.p50.median), p99: ms(micro.pgbouncer.p99.median) },
    "lone switch, lease direct": { p50: ms(single.leaseDirect.p50.median), p99: "" },
    "lone switch, lease via PgBouncer": { p50: ms(single.leaseThroughPgBouncer.p50.median), p99: "" },
    "lone switch, redis": { p50: ms(single.redis.p50.median), p99: "" },
    "bystander read, idle": { p50: ms(bystander.idle.reads.p50), p99: ms(bystander.idle.reads.p99) },
    "bystander read, 16 under lease": { p50: ms(bystander.lease.reads.p50), p99: ms(bystander.lease.reads.p99) },
    "bystander read, 16 under redis": { p50: ms(bystander.redis.reads.p50), p99: ms(bystander.redis.reads.p99) },
  });
  console.table(
    balanced.map((point) => ({
      K: point.users,
      "one instance (ms)": Math.round(point.oneInstance.median),
      "two behind HAProxy (ms)": Math.round(point.behindBalancer.median),
      ratio: point.ratio.toFixed(3),
      "within 5 %": Math.abs(point.ratio - 1) <= 0.05 ? "yes" : "NO",
    })),
  );
  console.log(`${path.relative(process.cwd(), file)} written (seed ${seed}).`);
} finally {
  for (const app of apps) await app.stop();
  await db.destroy();
  await redis.stop();
  await pgbouncer.stop();
}
