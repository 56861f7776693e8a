import { setTimeout as pause } from "node:timers/promises";
import pg from "pg";
import { config } from "../../core/config";
import type { ProviderCall } from "../../provider-sim/lab-client";
import { poolStats } from "../../core/db";
import { missingParts } from "../parts";
import { ada, appliedWrites, fact, slowSwitchCalls, type Lab } from "./lab";
import { adaKeyGoneAfter, adaKeyTaken } from "./redis-facts";
import type { Experiment } from "./types";

const callMs = 400;
type Compared = "advisory" | "session-advisory" | "lease" | "redis";

/** The connections of this database that hold a switch up, as the server lists them. */
async function connectionsSeen(probe: pg.Client) {
  const { rows } = await probe.query<{ idleInTransaction: number; pinnedSessions: number; advisoryLocks: number }>(
    `SELECT count(*) FILTER (WHERE a.state = 'idle in transaction')::int AS "idleInTransaction",
            count(*) FILTER (WHERE a.application_name LIKE 'lab:session-advisory:%')::int AS "pinnedSessions",
            (SELECT count(*)::int FROM pg_locks l JOIN pg_stat_activity h ON h.pid = l.pid
              WHERE l.locktype = 'advisory' AND l.granted AND h.datname = current_database()
                AND h.application_name <> 'lab:experiment-run') AS "advisoryLocks"
       FROM pg_stat_activity a WHERE a.datname = current_database()`,
  );
  return rows[0]!;
}

/**
 * Drops the backends a switch depends on: the one holding its advisory lock (the experiment's own run
 * lock aside) or, when none does (the lease), every connection of the app's pool (unnamed, not the
 * settings listener), the one the lease was acquired on among them.
 */
async function dropHolder(probe: pg.Client): Promise<{ droppedPoolConnections: boolean; terminated: number }> {
  const holders = await probe.query<{ pid: number }>(
    `SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database()
        AND a.application_name <> 'lab:experiment-run'`,
  );
  const pool = await probe.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = ''
        AND query NOT LIKE 'LISTEN%' AND pid <> pg_backend_pid()`,
  );
  const targets = holders.rows.length > 0 ? holders.rows : pool.rows;
  const terminated = await probe.query<{ pid: number }>(
    "SELECT pid FROM unnest($1::int[]) AS pid WHERE pg_terminate_backend(pid)",
    [targets.map((row) => row.pid)],
  );
  await backendsGone(
    probe,
    terminated.rows.map((row) => row.pid),
  );
  return {
    droppedPoolConnections: holders.rows.length === 0,
    terminated: terminated.rows.length,
  };
}

/**
 * Resolves once the terminated backends have exited (at most 2 s), and this process has read what they
 * sent first: a backend writes its FATAL to its socket before it exits, so by the time the server no longer
 * lists it, that message is waiting, and the I/O phase that ends before `setImmediate` runs delivers it. The
 * pool then has dropped every idle connection among them, so the next switch meets the strategy, not a
 * dead pooled connection.
 */
async function backendsGone(probe: pg.Client, pids: number[]): Promise<void> {
  const until = performance.now() + 2_000;
  const alive = async () =>
    (await probe.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1)", [pids]))
      .rows[0]!.n;
  while ((await alive()) > 0 && performance.now() < until) await pause(5);
  await new Promise((resolve) => setImmediate(resolve));
}

/** A switch under `strategy` whose connection is dropped during its first provider call, and a second switch after. */
async function dropDuringSwitch(lab: Lab, probe: pg.Client, strategy: Compared) {
  await lab.fresh({ strategy, provider: slowSwitchCalls(callMs) });
  const start = lab.sinceStart();
  const running = lab.switchTo(ada.github, `${strategy}: first switch (its connection is dropped)`);
  await lab.at(start + callMs / 2); // inside the unlink call
  const held = { poolInUse: poolStats().inUse, ...(await connectionsSeen(probe)) };
  const droppedAt = new Date();
  const drop = await dropHolder(probe);
  const second = await lab.switchTo(ada.email, `${strategy}: second switch, after the drop`);
  const first = await running;
  lab.mark(
    first.operationId,
    drop.droppedPoolConnections
      ? `the app pool's connections are dropped (${drop.terminated} ended)`
      : `the connection holding its lock is dropped (${drop.terminated} ended)`,
    droppedAt,
  );
  const [audit, calls] = await Promise.all([lab.audit(), lab.calls()]);
  const callsOf = (operationId: string) => calls.filter((call) => call.operationId === operationId);
  // A call is logged when it ends: it started `durationMs` before `at`.
  const secondCallsStarted = callsOf(second.operationId).map((call) => Date.parse(call.at) - call.durationMs);
  const firstCallsEnded = callsOf(first.operationId).map((call) => Date.parse(call.at));
  return {
    strategy,
    connectionsHeldDuringCalls: held,
    ...drop,
    first: fact(first),
    second: fact(second),
    secondCalledProviderWhileFirstDid:
      secondCallsStarted.length > 0 && Math.min(...secondCallsStarted) < Math.max(...firstCallsEnded),
    providerWritesApplied: {
      first: appliedWrites(calls, first.operationId),
      second: appliedWrites(calls, second.operationId),
    },
    auditConsistent: audit.consistent,
    violations: audit.violations,
  };
}

/**
 * Under `redis`, the first switch pauses past the key's TTL after its unlink (a GC pause, a stopped
 * process); a second switch takes the expired key; then the first resumes and makes its link call, with
 * the provider enforcing fencing: Redis gave the holder no fence to send, so nothing refuses it.
 */
async function redisPausedPastTtl(lab: Lab) {
  const ttlMs = 1_000;
  const pauseMs = 2_000;
  await lab.fresh({
    strategy: "redis",
    leaseTtlMs: ttlMs,
    provider: { ...slowSwitchCalls(200), enforceFencing: true },
    faults: { stall: { at: "unlinked", ms: pauseMs } },
  });
  const running = lab.switchTo(ada.github, `redis: first switch (pauses ${pauseMs} ms after unlinking)`);
  await adaKeyTaken(lab, ttlMs);
  await adaKeyGoneAfter(lab, ttlMs * 3);
  const second = await lab.switchTo(ada.email, "redis: second switch (after the key expired)");
  const first = await running;
  const [audit, calls] = await Promise.all([lab.audit(), lab.calls()]);
  const firstLink = calls.find((call) => call.operationId === first.operationId && call.method === "POST");
  // A call is logged when it ends: it started `durationMs` before `at`.
  const started = (call: ProviderCall) => Date.parse(call.at) - call.durationMs;
  const secondStarted = Math.min(...calls.filter((call) => call.operationId === second.operationId).map(started));
  return {
    ttlMs,
    pauseMs,
    first: fact(first),
    second: fact(second),
    firstLateLink: firstLink ? { status: firstLink.status, outcome: firstLink.outcome ?? null } : null,
    // Sent after the second holder had called the provider, and not refused as stale: there was no fence.
    lateWriteNotFenced: !!firstLink && started(firstLink) > secondStarted && firstLink.outcome !== "fenced",
    auditConsistent: audit.consistent,
    violations: audit.violations,
  };
}

export const advisoryOrLease: Experiment = {
  id: "q5-advisory-or-lease",
  title: "Advisory lock, Redis or lease?",
  question: "Why not a PostgreSQL advisory lock or a Redis lock, and when is a lock service the answer instead?",
  failureMode: null,
  expected:
    "While a switch calls the provider, `advisory` holds a pooled connection idle in transaction, " +
    "`session-advisory` a pinned connection, `redis` and `lease` none. " +
    "Dropping that connection: advisory's transaction dies and its switch fails; " +
    "session-advisory loses its lock silently and a second switch gets in while the first still " +
    "calls the provider; redis and the lease are unaffected and refuse the second switch. " +
    "With a redis-server running: a Redis holder paused past its TTL lets a second holder in, " +
    "and its late provider write is not refused as stale although the provider enforces fencing " +
    "(Redis gives no fence). Without one, the run says Redis was not measured.",
  tryNext:
    "Under `session-advisory`, click Make primary and, while it runs, " +
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE " +
    "'lab:session-advisory:%'; click again at once.",
  async run(lab) {
    const probe = new pg.Client({ connectionString: config.directDatabaseUrl, application_name: "lab:probe" });
    await probe.connect();
    try {
      const advisory = await dropDuringSwitch(lab, probe, "advisory");
      const session = await dropDuringSwitch(lab, probe, "session-advisory");
      const lease = await dropDuringSwitch(lab, probe, "lease");
      const redisMissing = await missingParts(["redis-server"]);
      const redis =
        redisMissing.length === 0
          ? { drop: await dropDuringSwitch(lab, probe, "redis"), paused: await redisPausedPastTtl(lab) }
          : null;
      const comparison = [advisory, session, lease, ...(redis ? [redis.drop] : [])].map((each) => ({
        strategy: each.strategy,
        connectionsHeldDuringCalls:
          each.connectionsHeldDuringCalls.poolInUse + each.connectionsHeldDuringCalls.pinnedSessions,
        afterTheDrop: each.first.status === 200 ? "the switch finished" : `the switch failed (${each.first.status})`,
        secondSwitchCalledProviderMeanwhile: each.secondCalledProviderWhileFirstDid,
        auditConsistent: each.auditConsistent,
      }));
      const asExpected =
        advisory.connectionsHeldDuringCalls.idleInTransaction >= 1 &&
        advisory.connectionsHeldDuringCalls.poolInUse >= 1 &&
        advisory.terminated === 1 &&
        advisory.first.status >= 500 &&
        // Held connections are judged from pg_stat_activity; the pool's own count also sees the app's
        // background queries (the reconciler's, a session check) at the moment it is sampled.
        session.connectionsHeldDuringCalls.pinnedSessions === 1 &&
        session.terminated === 1 &&
        session.first.status === 200 &&
        session.secondCalledProviderWhileFirstDid &&
        lease.connectionsHeldDuringCalls.idleInTransaction === 0 &&
        lease.connectionsHeldDuringCalls.advisoryLocks === 0 &&
        lease.first.status === 200 &&
        lease.second.status === 409 &&
        lease.auditConsistent &&
        (redis === null ||
          (redis.drop.connectionsHeldDuringCalls.idleInTransaction === 0 &&
            redis.drop.connectionsHeldDuringCalls.advisoryLocks === 0 &&
            redis.drop.first.status === 200 &&
            redis.drop.second.status === 409 &&
            redis.paused.second.status === 200 &&
            redis.paused.lateWriteNotFenced));
      const auditWords = (each: { auditConsistent: boolean; violations: string[] }) =>
        each.auditConsistent ? "consistent" : `inconsistent (${each.violations.join("; ")})`;
      const redisSteps = redis
        ? [
            "Redis (SET NX PX) held no connection either (pool in use " +
              `${redis.drop.connectionsHeldDuringCalls.poolInUse}), and the drop left its key alone: ` +
              `the first switch answered ${redis.drop.first.status}, the second ${redis.drop.second.status}.`,
            `But a Redis holder paused ${redis.paused.pauseMs} ms after its unlink, ` +
              `past the key's ${redis.paused.ttlMs} ms TTL, lost the key: a second switch took it ` +
              `(${redis.paused.second.status}).`,
            `The first holder then woke and made its link call after the second had called the provider.`,
            "The provider enforces fencing, yet did not refuse that call as stale (it answered " +
              `${redis.paused.firstLateLink?.status ?? "nothing"}${
                redis.paused.firstLateLink?.status === 400
                  ? ", by its own rule: the second switch had moved the accounts"
                  : ""
              }): ` +
              "Redis gave the holder no fence to send.",
            `The audit is ${auditWords(redis.paused)}. The lease's fence stops that write (see f2-lease-stolen).`,
          ]
        : [
            `Redis was not measured: no redis-server runs with this instance (start the lab with npm run dev -- --redis).`,
          ];
      const measuredSteps = comparison.map(
        (each) =>
          `Under ${each.strategy}: ${each.connectionsHeldDuringCalls} connection(s) ` +
          `held during the calls; after the drop ${each.afterTheDrop}; the second switch ` +
          `${
            each.secondSwitchCalledProviderMeanwhile
              ? "called the provider while the first still did"
              : "did not call the provider meanwhile"
          }; ` +
          `the audit ${each.auditConsistent ? "consistent" : "inconsistent"}.`,
      );
      return {
        observed: {
          providerCallMs: callMs,
          advisory,
          sessionAdvisory: session,
          lease,
          redis: redis ?? { measured: false, needs: redisMissing },
          comparison,
        },
        asExpected,
        explanation: (asExpected
          ? [
              `Each first switch had its database connection dropped (pg_terminate_backend) ${callMs / 2} ms ` +
                `into its first ${callMs} ms provider call.`,
              `Advisory (pg_advisory_xact_lock) held ${advisory.connectionsHeldDuringCalls.poolInUse} pooled ` +
                "connection idle in transaction for the whole call.",
              "The drop ended that transaction and released its lock: the provider calls went on " +
                `(${advisory.providerWritesApplied.first} applied), but the save failed ` +
                `(${advisory.first.status}).`,
              "The second advisory switch " +
                `${
                  advisory.secondCalledProviderWhileFirstDid
                    ? "got the lock and called the provider while the first still did"
                    : "did not get in"
                }, ` +
                `and the audit is ${auditWords(advisory)}.`,
              `Session-advisory (pg_advisory_lock) held no pooled connection, but a pinned one of its own.`,
              `The drop released its lock and nothing told the switch: it went on and answered ${session.first.status}.`,
              `Meanwhile the second switch, started ${session.second.startedMs - session.first.startedMs} ms ` +
                `after the first, took the lock and called the provider (it answered ${session.second.status}); ` +
                `the first ended ${session.first.endedMs - session.first.startedMs} ms after its start.`,
              `The audit is ${auditWords(session)}.`,
              `The lease held no connection during the calls (pool in use ${lease.connectionsHeldDuringCalls.poolInUse}).`,
              `Dropping the pool's ${lease.terminated} connections changed nothing: ` +
                `the first switch answered ${lease.first.status}, the second ${lease.second.status}, ` +
                `and the audit is ${auditWords(lease)}.`,
              ...redisSteps,
              "When to use which: a transaction-scoped advisory lock for short work inside one database " +
                "transaction, with no slow third party in it.",
              "A session advisory lock for a singleton job on a connection it owns (a migration, " +
                "a cron), where losing the connection means stopping the job.",
              "A lease stored as data for work that calls slow third parties or spans requests and processes: " +
                "it has a TTL, an owner, fencing tokens and a visible holder.",
              "With no single database of record, the lock cannot live in one database: " +
                "use a lock service with leases and fencing (etcd or ZooKeeper; Redis or Redlock only with " +
                "fencing tokens).",
            ]
          : [
              "Expected advisory's switch to fail after the drop, session-advisory to let a second switch in, " +
                "and the lease to refuse the second switch (409) with a consistent audit.",
              ...measuredSteps,
              ...(redis
                ? [
                    `Redis paused past its TTL: the second switch answered ${redis.paused.second.status}, ` +
                      "and the first one's late link " +
                      `${redis.paused.lateWriteNotFenced ? "was not refused as stale" : "was refused or not sent"}.`,
                  ]
                : [`Redis was not measured.`]),
            ]
        ).join(" "),
      };
    } finally {
      await probe.end();
    }
  },
};
