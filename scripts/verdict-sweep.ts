/**
 * `npm run sweep [-- --runs 30 --labs 2]`: every experiment run `runs` times, as the Learn view's Run button
 * runs it, on `labs` labs side by side: a loaded machine, as a class's is. Each lab is a fresh database on the
 * embedded server with its own simulated provider and redis-server, and two app instances: one direct, one
 * through a shared PgBouncer in transaction pooling (for pooler-strands-session-lock). Prints each
 * experiment's verdicts and run times, and every unexpected run's explanation and runId; writes the tally
 * to bench/results/verdict-sweep.json. Exits non-zero if any verdict was unexpected.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import os from "node:os";
import { parseArgs } from "node:util";
import { prepareDatabase } from "../db/prepare";
import { startPgBouncer, type RunningPgBouncer } from "./parts/pgbouncer";
import { startRedis } from "./parts/redis";
import { startApp } from "../test/harness/app-server";
import { databaseFor } from "../test/harness/databases";
import { appClient } from "../test/harness/http-client";
import { median } from "../bench/stats";

const { values } = parseArgs({
  options: { runs: { type: "string", default: "30" }, labs: { type: "string", default: "2" } },
});
const runs = Number(values.runs);
const labs = Number(values.labs);
// Outside the test suites' port pool (test/harness/ports.ts), so a sweep can run beside them.
const portBase = Number(process.env.SWEEP_PORT_BASE ?? 3320);
// The code the apps run: read now, as the checkout may move on while the sweep runs.
const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"]).toString().trim();

interface Tally {
  experimentId: string;
  asExpected: number;
  unexpected: { runId: string; explanation: string }[];
  seconds: number[];
}

/** A lab on its own database: its provider and redis-server, and two app instances, direct and pooled. */
async function startLab(
  index: number,
  databaseUrl: string,
  pgbouncer: RunningPgBouncer,
  stops: (() => Promise<void>)[],
) {
  const redis = await startRedis(6390 + index);
  stops.push(redis.stop);
  const env = { REDIS_URL: redis.url, LAB_INSTANCE: `sweep-${index}` };
  const direct = await startApp({ databaseUrl, port: portBase + 2 * index, env });
  stops.unshift(direct.stop);
  const pooledEnv = pgbouncer.appEnv(databaseUrl);
  const pooled = await startApp({
    databaseUrl: pooledEnv.DATABASE_URL,
    port: portBase + 2 * index + 1,
    env: { ...env, ...pooledEnv, LAB_INSTANCE: `sweep-${index}-pooled` },
  });
  stops.unshift(pooled.stop);
  return { direct: appClient(direct.baseUrl), pooled: appClient(pooled.baseUrl) };
}

// What was started, the apps first, then the parts: stopped in that order, whatever failed on the way.
const stops: (() => Promise<void>)[] = [];
const databaseUrls = await Promise.all(
  Array.from({ length: labs }, (_, index) => prepareDatabase(databaseFor(`sweep_${index}`), { fresh: true })),
);
// One PgBouncer serves every database of the embedded server (`* = host=… port=…`).
const pgbouncer = await startPgBouncer(databaseUrls[0]!, Number(process.env.SWEEP_PGBOUNCER_PORT ?? 6443));
stops.push(pgbouncer.stop);
const tallies = new Map<string, Tally>();
const begun = Date.now();
try {
  const started = await Promise.all(databaseUrls.map((url, index) => startLab(index, url, pgbouncer, stops)));
  const listed = (await started[0]!.direct.get("/api/lab/experiments")).body.experiments as {
    id: string;
    needs: string[];
  }[];
  // The experiments that need PgBouncer run on the pooled instance, the others straight to PostgreSQL.
  const throughPgBouncer = new Set(listed.filter(({ needs }) => needs.includes("pgbouncer")).map(({ id }) => id));
  for (const { id } of listed) tallies.set(id, { experimentId: id, asExpected: 0, unexpected: [], seconds: [] });
  // Every experiment `runs` times in all, shared out among the labs, each lab running one at a time.
  const queue = Array.from({ length: runs }, () => listed.map(({ id }) => id)).flat();
  const total = queue.length;
  let done = 0;
  await Promise.all(
    started.map(async (lab) => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        const client = throughPgBouncer.has(id) ? lab.pooled : lab.direct;
        const at = performance.now();
        const answer = await client.post(`/api/lab/experiments/${id}/run`);
        const tally = tallies.get(id)!;
        tally.seconds.push(Math.round(performance.now() - at) / 1000);
        if (answer.status === 200 && answer.body.verdict === "as-expected") tally.asExpected++;
        else
          tally.unexpected.push({
            runId: answer.body?.runId ?? `HTTP ${answer.status}`,
            explanation: answer.body?.explanation ?? answer.body?.detail ?? JSON.stringify(answer.body),
          });
        done++;
        process.stdout.write(`\r${done} of ${total} runs, ${Math.round((Date.now() - begun) / 1000)} s`);
      }
    }),
  );
} finally {
  for (const stop of stops) await stop();
}

const rows = [...tallies.values()].map((tally) => ({
  experiment: tally.experimentId,
  "as expected": tally.asExpected,
  unexpected: tally.unexpected.length,
  "median s": median(tally.seconds),
  "slowest s": tally.seconds.length > 0 ? Math.max(...tally.seconds) : 0,
}));
console.log(`\n\n${runs} runs of each experiment, ${labs} at a time, in ${Math.round((Date.now() - begun) / 1000)} s`);
console.table(rows);
for (const tally of tallies.values())
  for (const { runId, explanation } of tally.unexpected)
    console.log(`UNEXPECTED ${tally.experimentId} (${runId}): ${explanation}`);
writeFileSync(
  "bench/results/verdict-sweep.json",
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      commit,
      machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
      runsEach: runs,
      labsAtATime: labs,
      experiments: [...tallies.values()],
    },
    null,
    2,
  )}\n`,
);
process.exitCode = rows.every((row) => row.unexpected === 0) ? 0 : 1;
