/**
 * `npm run course:record [-- --only id,id --attempts 3]`: records the course's shipped runs, the known-good runs
 * a lesson opens instead of running live (a class on a busy laptop). Starts the built app on a fresh database of
 * its own, with a redis-server and a PgBouncer in transaction pooling as `npm run dev -- --pgbouncer --redis`
 * would (the experiments that need PgBouncer run on an instance through it, the others on one straight to
 * PostgreSQL, as the verdict sweep does), runs every experiment as the Run button does and writes each saved run,
 * as `GET /api/lab/runs/{runId}` answers it, to public/course/runs/{experimentId}.json. A run whose verdict is
 * unexpected is printed and run again, up to `attempts` times; an experiment with no as-expected run fails the
 * script and keeps its earlier file.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { prepareDatabase } from "../db/prepare";
import { startApp } from "../test/harness/app-server";
import { databaseFor } from "../test/harness/databases";
import { appClient, type AppClient } from "../test/harness/http-client";
import { startPgBouncer } from "./parts/pgbouncer";
import { startRedis } from "./parts/redis";

const { values } = parseArgs({
  options: { only: { type: "string" }, attempts: { type: "string", default: "3" } },
});
const attempts = Number(values.attempts);
const only = values.only?.split(",").filter(Boolean) ?? null;
const outputDir = path.resolve(import.meta.dirname, "../public/course/runs");
// Four ports from here: a redis-server, a PgBouncer, the direct instance and the pooled one.
const firstPort = Number(process.env.COURSE_RECORD_PORT_BASE ?? 3340);

interface Listed {
  id: string;
  needs: string[];
  available: boolean;
}

/** One experiment run until one run is as expected (at most `attempts`): its saved run, or null. */
async function recordOne(client: AppClient, id: string): Promise<Record<string, unknown> | null> {
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const answer = await client.post(`/api/lab/experiments/${id}/run`);
    if (answer.status !== 200) {
      console.log(`[course] ${id}: HTTP ${answer.status} ${JSON.stringify(answer.body)}`);
      continue;
    }
    if (answer.body.verdict !== "as-expected") {
      console.log(`[course] ${id}, attempt ${attempt}: unexpected (${answer.body.runId}): ${answer.body.explanation}`);
      continue;
    }
    const saved = await client.get(`/api/lab/runs/${answer.body.runId}`);
    if (saved.status !== 200) throw new Error(`GET /api/lab/runs/${answer.body.runId} answered ${saved.status}`);
    return saved.body;
  }
  return null;
}

const stops: (() => Promise<void>)[] = [];
const failed: string[] = [];
try {
  const databaseUrl = await prepareDatabase(databaseFor("course_record"), { fresh: true });
  const redis = await startRedis(firstPort + 1);
  stops.push(redis.stop);
  const pgbouncer = await startPgBouncer(databaseUrl, firstPort + 2);
  stops.push(pgbouncer.stop);
  const env = { REDIS_URL: redis.url, LAB_INSTANCE: "1" };
  const direct = await startApp({ databaseUrl, port: firstPort + 3, env });
  stops.unshift(direct.stop);
  const pooledEnv = pgbouncer.appEnv(databaseUrl);
  const pooled = await startApp({
    databaseUrl: pooledEnv.DATABASE_URL,
    port: firstPort + 4,
    env: { ...env, ...pooledEnv },
  });
  stops.unshift(pooled.stop);
  const clients = { direct: appClient(direct.baseUrl), pooled: appClient(pooled.baseUrl) };
  const listedBy = async (client: AppClient) =>
    new Map(((await client.get("/api/lab/experiments")).body.experiments as Listed[]).map((each) => [each.id, each]));
  const listed = { direct: await listedBy(clients.direct), pooled: await listedBy(clients.pooled) };
  mkdirSync(outputDir, { recursive: true });
  for (const { id, needs } of [...listed.direct.values()].filter((each) => !only || only.includes(each.id))) {
    const on = needs.includes("pgbouncer") ? "pooled" : "direct";
    if (!listed[on].get(id)?.available) {
      // A card that needs parts these labs do not run (a replicated database) keeps its file: it is recorded by
      // hand, from the Run button's runId, on a lab started with its parts.
      console.log(`[course] ${id}: not run here (it needs ${needs.join(", ")}): its file is kept`);
      continue;
    }
    const started = performance.now();
    const run = await recordOne(clients[on], id);
    if (!run) {
      failed.push(id);
      continue;
    }
    writeFileSync(path.join(outputDir, `${id}.json`), `${JSON.stringify(run, null, 2)}\n`);
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    console.log(`[course] ${id}: recorded in ${seconds} s → public/course/runs/${id}.json`);
  }
} finally {
  for (const stop of stops) await stop();
}
if (failed.length > 0) {
  console.error(`[course] no as-expected run in ${attempts} attempts: ${failed.join(", ")}`);
  process.exitCode = 1;
}
