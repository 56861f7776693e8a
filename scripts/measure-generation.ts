/**
 * `npm run measure:generation`: which value can stand for the lease's generation, one that grows at every
 * promotion, measured on real promotions. Each candidate is read every 10 ms on the node being promoted,
 * from its first write accepted until its end-of-recovery checkpoint is over and 2 s more:
 *  - the timeline of the WAL insert position, `pg_walfile_name(pg_current_wal_lsn())` (no write needed);
 *  - the timeline of the last checkpoint, `pg_control_checkpoint()` (lags until that checkpoint ends);
 *  - a row bumped by the promotion: under Patroni, its `on_role_change` callback runs an UPDATE.
 * Once with `pg_ctl promote` (`--replica sync`), once with Patroni after a SIGKILL of the primary (`--ha`).
 * It writes `bench/results/failover-generation.json`. Ports as the launcher's (PG_NODE1_PORT, …).
 */
import { chmodSync, chownSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { onNode, type DatabaseCluster, type DatabaseNodeView } from "./parts/database-cluster";
import { partDirectory, postgresRunner, root } from "./parts/part-process";
import { haPorts, startPatroniCluster } from "./parts/patroni";
import { postgresProgram, superuser } from "./parts/postgres-node";
import { startReplicaPair } from "./parts/replica";

interface Sample {
  /** ms since the node first accepted a write. */
  atMs: number;
  insertTimeline: number;
  checkpointTimeline: number;
  bumpedRow: number | null;
}

/** When the node being promoted first took a write, on the wall clock (the callback's log is on it). */
const writableSince = { epochMs: 0 };

const insertTimeline = `('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint`;

/** Polls `url` (the node being promoted) until it takes a write, then samples the candidates. */
async function sampleAfterPromotion(url: string, promote: () => Promise<void>): Promise<Sample[]> {
  const client = async () => {
    for (;;) {
      const each = new pg.Client({ connectionString: url, connectionTimeoutMillis: 500 });
      each.on("error", () => undefined);
      try {
        await each.connect();
        return each;
      } catch {
        await sleep(10);
      }
    }
  };
  let connection = await client();
  const promoting = promote();
  let writableAt: number | null = null;
  const samples: Sample[] = [];
  for (let settledAt: number | null = null; settledAt === null || performance.now() - settledAt < 2_000;) {
    try {
      if (writableAt === null) {
        await connection.query("INSERT INTO generation_probe VALUES (clock_timestamp())");
        writableAt = performance.now();
        writableSince.epochMs = Date.now();
      }
      const { rows } = await connection.query<{ insert: string; checkpoint: number; bumped: number | null }>(
        `SELECT ${insertTimeline} AS insert, (pg_control_checkpoint()).timeline_id AS checkpoint,
                (SELECT n FROM generation_row) AS bumped`,
      );
      const sample = {
        atMs: Math.round(performance.now() - writableAt),
        insertTimeline: Number(rows[0]!.insert),
        checkpointTimeline: rows[0]!.checkpoint,
        bumpedRow: rows[0]!.bumped,
      };
      samples.push(sample);
      if (settledAt === null && sample.checkpointTimeline === sample.insertTimeline) settledAt = performance.now();
    } catch {
      // still a standby (read-only), or the connection went with the old primary
      connection.end().catch(() => undefined);
      connection = await client();
    }
    await sleep(10);
  }
  await promoting;
  await connection.end();
  return samples;
}

/** When each candidate first named the new timeline (or the bumped row its new value), in ms after the first write. */
function summary(samples: Sample[], before: { timeline: number; bumped: number | null }) {
  const first = (grew: (sample: Sample) => boolean) => samples.find(grew)?.atMs ?? null;
  return {
    timelineBefore: before.timeline,
    atFirstWrite: samples[0],
    insertTimelineGrewAtMs: first((sample) => sample.insertTimeline > before.timeline),
    checkpointTimelineGrewAtMs: first((sample) => sample.checkpointTimeline > before.timeline),
    bumpedRowGrewAtMs: before.bumped === null ? null : first((sample) => (sample.bumpedRow ?? 0) > before.bumped!),
    samples: samples.length,
  };
}

async function prepare(cluster: DatabaseCluster): Promise<{ timeline: number; bumped: number | null }> {
  const url = cluster.url("postgres");
  await onNode(url, "CREATE TABLE IF NOT EXISTS generation_probe (at timestamptz)");
  await onNode(url, "CREATE TABLE IF NOT EXISTS generation_row (n int NOT NULL)");
  await onNode(url, "INSERT INTO generation_row SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM generation_row)");
  // A checkpoint first: the timelines then agree before the promotion.
  await onNode(url, "CHECKPOINT");
  const rows = await onNode<{ timeline: string; n: number }>(
    url,
    `SELECT ${insertTimeline} AS timeline, (SELECT n FROM generation_row) AS n`,
  );
  return { timeline: Number(rows[0]!.timeline), bumped: rows[0]!.n };
}

const rounds = 3;

/** `rounds` promotions on `cluster`: each kills the primary, promotes the standby, and brings the old one back. */
async function promotions<T>(
  cluster: DatabaseCluster,
  round: (primary: string, standby: DatabaseNodeView) => Promise<T>,
): Promise<T[]> {
  const results: T[] = [];
  try {
    for (let each = 0; each < rounds; each++) {
      const nodes = await cluster.nodes();
      const primary = nodes.find((node) => node.role === "primary")!;
      results.push(
        await round(
          primary.name,
          nodes.find((node) => node.role === "standby")!,
        ),
      );
      await cluster.rejoin(primary.name);
    }
    return results;
  } finally {
    await cluster.stop();
  }
}

async function withPgCtlPromote() {
  const cluster = await startReplicaPair("sync");
  return promotions(cluster, async (primary, standby) => {
    const before = await prepare(cluster);
    await cluster.kill(primary);
    const samples = await sampleAfterPromotion(standby.url, () => cluster.promote(standby.name));
    return { ...summary(samples, { ...before, bumped: null }), how: "SIGKILL of the primary, then pg_ctl promote" };
  });
}

const callbackLog = (name: string) => path.join(partDirectory("generation-callback"), `on-role-change-${name}.log`);

/** The callback a node's Patroni runs at each role change: on becoming the leader, it bumps the row on itself. */
function bumpingCallback({ name, port }: { name: string; port: number }): string {
  const file = path.join(partDirectory("generation-callback"), `on-role-change-${name}.sh`);
  const psql = path.join(path.dirname(postgresProgram("postgres")), "psql");
  writeFileSync(
    file,
    [
      "#!/bin/sh",
      '# Patroni: on_role_change <action> <role> <scope>; the leader is "master" in Patroni 3.0, "primary" later.',
      'case "$2" in master|primary) ;; *) exit 0 ;; esac',
      `log=${callbackLog(name)}`,
      'echo "ran at $(date +%s%3N)" >>"$log"',
      `PGPASSWORD=${superuser.password} ${psql} -h 127.0.0.1 -p ${port} -U ${superuser.user} -d postgres \\`,
      '  -c "UPDATE generation_row SET n = n + 1" >>"$log" 2>&1',
      'echo "psql exited $?" >>"$log"',
      "",
    ].join("\n"),
  );
  chmodSync(file, 0o755);
  const runner = postgresRunner();
  // It runs as the user Patroni runs as, and writes its log beside it.
  if (runner) for (const each of [file, path.dirname(file)]) chownSync(each, runner.uid, runner.gid);
  return file;
}

async function withPatroni() {
  const cluster = await startPatroniCluster(haPorts(), { onRoleChange: bumpingCallback });
  return promotions(cluster, async (primary, standby) => {
    const before = await prepare(cluster);
    rmSync(callbackLog(standby.name), { force: true });
    const samples = await sampleAfterPromotion(standby.url, () => cluster.kill(primary));
    // Patroni may run the callback a moment after the measurement ends.
    await sleep(2_000);
    const callback = readFileSync(callbackLog(standby.name), "utf8").trim().split("\n");
    const ranAt = Number(callback[0]?.replace("ran at ", ""));
    return {
      ...summary(samples, before),
      callback: { ranMsAfterFirstWrite: ranAt - writableSince.epochMs, output: callback.slice(1) },
      how: "SIGKILL of the primary's Patroni and PostgreSQL; Patroni promotes the synchronous standby",
    };
  });
}

const results = {
  measuredAt: new Date().toISOString(),
  pgCtlPromote: await withPgCtlPromote(),
  patroni: await withPatroni(),
};
const file = path.join(root, "bench", "results", "failover-generation.json");
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
for (const [name, each] of [
  ["pg_ctl promote", results.pgCtlPromote],
  ["Patroni", results.patroni],
] as const)
  for (const result of each)
    console.log(
      `${name}: at the first write, WAL insert timeline ${result.atFirstWrite?.insertTimeline}, checkpoint timeline ` +
        `${result.atFirstWrite?.checkpointTimeline} (before: ${result.timelineBefore}); the checkpoint's grew ` +
        `${result.checkpointTimelineGrewAtMs} ms later` +
        ("callback" in result
          ? `; a row bumped by on_role_change grew ${result.bumpedRowGrewAtMs ?? "never (while measured)"}` +
            ` (its callback ran ${result.callback.ranMsAfterFirstWrite} ms after the first write: ${result.callback.output.join(" / ")})`
          : ""),
    );
console.log(`written to ${path.relative(root, file)}`);
