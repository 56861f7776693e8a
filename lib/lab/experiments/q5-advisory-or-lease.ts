import { setTimeout as pause } from "node:timers/promises";
import pg from "pg";
import { config } from "../../core/config";
import type { ProviderCall } from "../../provider-sim/lab-client";
import { poolStats } from "../../core/db";
import { missingParts } from "../parts";
import { openPinnedConnections } from "../strategies";
import { notTheGatesLock } from "../watch-gate";
import { ada, appliedWrites, fact, slowSwitchCalls, type Lab } from "./lab";
import { adaKeyGoneAfter, adaKeyTaken } from "./redis-facts";
import type { Experiment } from "./types";

/**
 * Every provider call: long enough that the measure (a tenth of it) and the drop fall inside the first
 * switch's first call on a machine as busy as a class's (the provider's log says whether they did). The
 * two switches' calls are equally long, so that the first one's land first, as on a calm machine.
 */
const callMs = 1_000;
type Compared = "advisory" | "session-advisory" | "lease" | "redis";

/**
 * The lab's own sessions are named `lab:…` (the run lock, this probe, the instruments, the simulated
 * provider, session-advisory's connections): every other session of the database is the app's, or, through
 * a transaction pooler, a server connection the pooler holds for it.
 */
const notTheLabs = "application_name NOT LIKE 'lab:%' AND pid <> pg_backend_pid()";

/** What PostgreSQL lists now: transactions left open, and granted advisory locks (the run lock aside). */
async function serverView(probe: pg.Client) {
  const { rows } = await probe.query<{ idleInTransaction: number; advisoryLocks: number }>(
    `SELECT count(*) FILTER (WHERE a.state = 'idle in transaction')::int AS "idleInTransaction",
            (SELECT count(*)::int FROM pg_locks l JOIN pg_stat_activity h ON h.pid = l.pid
              WHERE l.locktype = 'advisory' AND l.granted AND h.datname = current_database()
                AND h.application_name <> 'lab:experiment-run' AND ${notTheGatesLock("l")}) AS "advisoryLocks"
       FROM pg_stat_activity a WHERE a.datname = current_database()`,
  );
  return rows[0]!;
}

/** The backends holding a granted advisory lock of this database, the experiment runner's own aside. */
async function lockHolders(probe: pg.Client): Promise<number[]> {
  const { rows } = await probe.query<{ pid: number }>(
    `SELECT DISTINCT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database()
        AND a.application_name <> 'lab:experiment-run' AND ${notTheGatesLock("l")}`,
  );
  return rows.map((row) => row.pid);
}

/**
 * The connections a switch holds while its first call is in flight, counted on the app's side: the least,
 * over `windowMs` sampled every 5 ms, of its pooled connections in use (a background query of the app is
 * brief; a connection held for the call is in use throughout) and of session-advisory's own connections.
 * Behind a transaction pooler those are the app's client connections, not the pooler's server connections.
 * Plus what PostgreSQL lists at the end of the window.
 */
async function heldDuringCall(probe: pg.Client, windowMs: number) {
  let poolInUse = Number.POSITIVE_INFINITY;
  let pinnedConnections = Number.POSITIVE_INFINITY;
  const until = performance.now() + windowMs;
  do {
    poolInUse = Math.min(poolInUse, poolStats().inUse);
    pinnedConnections = Math.min(pinnedConnections, openPinnedConnections());
    await pause(5);
  } while (performance.now() < until);
  return { poolInUse, pinnedConnections, ...(await serverView(probe)) };
}

/**
 * Drops what a switch depends on: for a lock, the backends holding it (the experiment's own run lock aside);
 * for `lease` and `redis`, every session of the app (not the lab's own, nor a listener), the one the lease
 * was acquired on among them. Returns how many it ended and when (the database's clock).
 */
async function dropHolder(probe: pg.Client, strategy: Compared): Promise<{ terminated: number; droppedAt: Date }> {
  const apps = await probe.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND ${notTheLabs} AND query NOT LIKE 'LISTEN%'`,
  );
  const locked = strategy === "advisory" || strategy === "session-advisory";
  const targets = locked ? await lockHolders(probe) : apps.rows.map((row) => row.pid);
  const terminated = await probe.query<{ pid: number; at: Date }>(
    "SELECT pid, clock_timestamp() AS at FROM unnest($1::int[]) AS pid WHERE pg_terminate_backend(pid)",
    [targets],
  );
  await backendsGone(
    probe,
    terminated.rows.map((row) => row.pid),
  );
  return { terminated: terminated.rows.length, droppedAt: terminated.rows[0]?.at ?? new Date() };
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

/**
 * Session locks left over from earlier switches, ended before a variant starts. A direct connection takes
 * its session's locks with it when it closes; through a transaction pooler, the server connection that ran
 * pg_advisory_lock stays open in the pooler's pool with the lock on it (pooler-strands-session-lock).
 */
async function endLeftoverLocks(probe: pg.Client): Promise<number> {
  const leftovers = await lockHolders(probe);
  if (leftovers.length === 0) return 0;
  await probe.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [leftovers]);
  await backendsGone(probe, leftovers);
  return leftovers.length;
}

/** A switch under `strategy` whose connection is dropped during its first provider call, and a second switch after. */
async function dropDuringSwitch(lab: Lab, probe: pg.Client, strategy: Compared) {
  await lab.fresh({ strategy, provider: slowSwitchCalls(callMs) });
  const leftoverLocksEnded = await endLeftoverLocks(probe);
  const running = lab.switchTo(ada.github, `${strategy}: first switch (its connection is dropped)`);
  const firstId = lab.operationIds.at(-1)!;
  // Measured inside the unlink call, as its lane shows it running: a switch reaches its first call later
  // through a pooler, and later still on a busy machine.
  const inCall = await lab.inPhase(firstId, "unlink", 5_000);
  const held = await heldDuringCall(probe, callMs / 10);
  const drop = await dropHolder(probe, strategy);
  const second = await lab.switchTo(ada.email, `${strategy}: second switch, after the drop`);
  const first = await running;
  lab.mark(
    first.operationId,
    strategy === "advisory" || strategy === "session-advisory"
      ? `the connection holding its lock is dropped (${drop.terminated} ended)`
      : `the app's connections are dropped (${drop.terminated} ended)`,
    drop.droppedAt,
  );
  const [audit, calls] = await Promise.all([lab.audit(), lab.calls()]);
  const callsOf = (operationId: string) => calls.filter((call) => call.operationId === operationId);
  // A call is logged when it ends: it started `durationMs` before `at`.
  const secondCallsStarted = callsOf(second.operationId).map((call) => Date.parse(call.at) - call.durationMs);
  const firstCallsEnded = callsOf(first.operationId).map((call) => Date.parse(call.at));
  const firstUnlink = callsOf(first.operationId).find((call) => call.method === "DELETE");
  return {
    strategy,
    leftoverLocksEnded,
    connectionsHeldDuringCalls: held,
    terminated: drop.terminated,
    // The drop came while the first unlink was at the provider: it was sent before and answered after.
    droppedDuringTheCall: inCall && !!firstUnlink && Date.parse(firstUnlink.at) > drop.droppedAt.getTime(),
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

type Dropped = Awaited<ReturnType<typeof dropDuringSwitch>>;
type Paused = Awaited<ReturnType<typeof redisPausedPastTtl>>;

/** The connections a strategy held during the calls, as the app counts them: pooled, and its own. */
const heldByTheApp = (each: Dropped): number =>
  each.connectionsHeldDuringCalls.poolInUse + each.connectionsHeldDuringCalls.pinnedConnections;

function asExpectedOf(
  advisory: Dropped,
  session: Dropped,
  lease: Dropped,
  redis: { drop: Dropped; paused: Paused } | null,
) {
  const dropped = [advisory, session, lease, ...(redis ? [redis.drop] : [])];
  const holdsNothing = (each: Dropped) =>
    heldByTheApp(each) === 0 &&
    each.connectionsHeldDuringCalls.idleInTransaction === 0 &&
    each.connectionsHeldDuringCalls.advisoryLocks === 0;
  return (
    dropped.every((each) => each.droppedDuringTheCall) &&
    advisory.connectionsHeldDuringCalls.poolInUse >= 1 &&
    advisory.connectionsHeldDuringCalls.idleInTransaction >= 1 &&
    advisory.connectionsHeldDuringCalls.advisoryLocks === 1 &&
    advisory.terminated === 1 &&
    advisory.first.status >= 500 &&
    session.connectionsHeldDuringCalls.pinnedConnections === 1 &&
    session.connectionsHeldDuringCalls.poolInUse === 0 &&
    session.connectionsHeldDuringCalls.advisoryLocks === 1 &&
    session.terminated === 1 &&
    session.first.status === 200 &&
    session.secondCalledProviderWhileFirstDid &&
    holdsNothing(lease) &&
    lease.first.status === 200 &&
    lease.second.status === 409 &&
    lease.auditConsistent &&
    (redis === null ||
      (holdsNothing(redis.drop) &&
        redis.drop.first.status === 200 &&
        redis.drop.second.status === 409 &&
        redis.paused.second.status === 200 &&
        redis.paused.lateWriteNotFenced))
  );
}

const auditWords = (each: { auditConsistent: boolean; violations: string[] }) =>
  each.auditConsistent ? "consistent" : `inconsistent (${each.violations.join("; ")})`;

/** What a transaction pooler changes in what this card can measure, in words (none when the pool is direct). */
function poolerSteps(session: Dropped, leftoverLocksEnded: number): string[] {
  if (!config.transactionPooler) return [];
  return [
    `This instance's pool goes through a transaction pooler (PgBouncer): the connections counted are the app's own (its pooled ` +
      `connections in use, its session-lock connections), not the pooler's server connections.`,
    `Advisory's transaction holds a server connection for as long as it lasts, as a direct one would.`,
    `Session-advisory's connection is only a client of the pooler: its lock sits on whichever server connection ran ` +
      `pg_advisory_lock, which the pooler may hand to other clients meanwhile, and which keeps the lock after the switch closes ` +
      `its client (see pooler-strands-session-lock).`,
    leftoverLocksEnded > 0
      ? `${leftoverLocksEnded} such lock(s), left behind by earlier switches, were ended before the variant that followed them ` +
        `(pg_terminate_backend), so that each variant starts from a free lock.`
      : `No lock was left behind between the variants.`,
    `Dropping its lock's backend still frees the lock: the second switch got in (${session.second.status}).`,
  ];
}

function redisSteps(redis: { drop: Dropped; paused: Paused } | null): string[] {
  if (!redis)
    return [
      `Redis was not measured: no redis-server runs with this instance (start the lab with npm run dev -- --redis).`,
    ];
  const { drop, paused } = redis;
  return [
    `Redis (SET NX PX) held no connection either (pool in use ${drop.connectionsHeldDuringCalls.poolInUse}), and the drop left ` +
      `its key alone: the first switch answered ${drop.first.status}, the second ${drop.second.status}.`,
    `But a Redis holder paused ${paused.pauseMs} ms after its unlink, past the key's ${paused.ttlMs} ms TTL, lost the key: a ` +
      `second switch took it (${paused.second.status}).`,
    `The first holder then woke and made its link call after the second had called the provider.`,
    `The provider enforces fencing, yet did not refuse that call as stale (it answered ` +
      `${paused.firstLateLink?.status ?? "nothing"}` +
      (paused.firstLateLink?.status === 400 ? ", by its own rule: the second switch had moved the accounts" : "") +
      "): " +
      `Redis gave the holder no fence to send.`,
    `The audit is ${auditWords(paused)}. The lease's fence stops that write (see f2-lease-stolen).`,
  ];
}

function explanationAsExpected(
  advisory: Dropped,
  session: Dropped,
  lease: Dropped,
  redis: { drop: Dropped; paused: Paused } | null,
  leftovers: number,
) {
  return [
    "Each first switch had what it depends on dropped (pg_terminate_backend) while its first provider call " +
      `(a ${callMs} ms unlink) was in flight, as its lane showed it.`,
    `Advisory (pg_advisory_xact_lock) held ${advisory.connectionsHeldDuringCalls.poolInUse} pooled connection, idle in ` +
      `transaction, for the whole call.`,
    `The drop ended that transaction and released its lock: the provider calls went on (${advisory.providerWritesApplied.first} ` +
      `applied), but the save failed (${advisory.first.status}).`,
    `The second advisory switch ` +
      (advisory.secondCalledProviderWhileFirstDid
        ? "got the lock and called the provider while the first still did, "
        : "did not get in, ") +
      `and the audit is ${auditWords(advisory)}.`,
    `Session-advisory (pg_advisory_lock) held no pooled connection, but ${session.connectionsHeldDuringCalls.pinnedConnections} ` +
      `connection of its own.`,
    `The drop released its lock and nothing told the switch: it went on and answered ${session.first.status}.`,
    `Meanwhile the second switch, started ${session.second.startedMs - session.first.startedMs} ms after the first, took the ` +
      `lock and called the provider (it answered ${session.second.status}); the first ended ` +
      `${session.first.endedMs - session.first.startedMs} ms after its start.`,
    `The audit is ${auditWords(session)}.`,
    `The lease held no connection during the calls (pool in use ${lease.connectionsHeldDuringCalls.poolInUse}).`,
    `Dropping the app's ${lease.terminated} database session(s) changed nothing: the first switch answered ` +
      `${lease.first.status}, the second ${lease.second.status}, and the audit is ${auditWords(lease)}.`,
    ...poolerSteps(session, leftovers),
    ...redisSteps(redis),
    `When to use which: a transaction-scoped advisory lock for short work inside one database transaction, with no slow third party in it.`,
    `A session advisory lock for a singleton job on a connection it owns (a migration, a cron), where losing the connection ` +
      `means stopping the job.`,
    `A lease stored as data for work that calls slow third parties or spans requests and processes: it has a TTL, an owner, ` +
      `fencing tokens and a visible holder.`,
    `With no single database of record, the lock cannot live in one database: use a lock service with leases and fencing (etcd ` +
      `or ZooKeeper; Redis or Redlock only with fencing tokens).`,
  ];
}

function explanationUnexpected(dropped: Dropped[], redis: { drop: Dropped; paused: Paused } | null, leftovers: number) {
  return [
    `Expected advisory's switch to fail after the drop, session-advisory to let a second switch in, and the lease to refuse the ` +
      `second switch (409) with a consistent audit.`,
    ...dropped.map(
      (each) =>
        `Under ${each.strategy}: ${heldByTheApp(each)} of the app's connection(s) held during the calls ` +
        `(${each.connectionsHeldDuringCalls.idleInTransaction} idle in transaction, ` +
        `${each.connectionsHeldDuringCalls.advisoryLocks} advisory lock(s) granted); the drop ` +
        `${each.droppedDuringTheCall ? "came during the first call" : "did not come during the first call"} and ended ` +
        `${each.terminated} session(s); after it ` +
        `${each.first.status === 200 ? "the switch finished" : `the switch failed (${each.first.status})`}; the second switch ` +
        (each.secondCalledProviderWhileFirstDid
          ? "called the provider while the first still did; "
          : "did not call the provider meanwhile; ") +
        `the audit ${each.auditConsistent ? "consistent" : "inconsistent"}.`,
    ),
    ...(config.transactionPooler
      ? [`Through a transaction pooler; ${leftovers} session lock(s) left behind by earlier switches were ended.`]
      : []),
    redis
      ? `Redis paused past its TTL: the second switch answered ${redis.paused.second.status}, and the first one's late link ` +
        `${redis.paused.lateWriteNotFenced ? "was not refused as stale" : "was refused or not sent"}.`
      : `Redis was not measured.`,
  ];
}

export const advisoryOrLease: Experiment = {
  id: "q5-advisory-or-lease",
  title: "Advisory lock, Redis or lease?",
  question: "Why not a PostgreSQL advisory lock or a Redis lock, and when is a lock service the answer instead?",
  failureMode: null,
  expected:
    "While a switch calls the provider, `advisory` holds a pooled connection idle in transaction, `session-advisory` a pinned " +
    "connection, `redis` and `lease` none. Dropping that connection: advisory's transaction dies and its switch fails; " +
    "session-advisory loses its lock silently and a second switch gets in while the first still calls the provider; redis and " +
    "the lease are unaffected and refuse the second switch. With a redis-server running: a Redis holder paused past its TTL " +
    "lets a second holder in, and its late provider write is not refused as stale although the provider enforces fencing " +
    "(Redis gives no fence). Without one, the run says Redis was not measured. Behind a transaction pooler the connections " +
    "counted are the app's, and the run says what the pooler changes.",
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
      // Ended at the start of each variant: what the earlier ones (and switches before the run) left.
      const leftovers = [advisory, session, lease, ...(redis ? [redis.drop] : [])].reduce(
        (sum, each) => sum + each.leftoverLocksEnded,
        0,
      );
      const dropped = [advisory, session, lease, ...(redis ? [redis.drop] : [])];
      const comparison = dropped.map((each) => ({
        strategy: each.strategy,
        connectionsHeldDuringCalls: heldByTheApp(each),
        afterTheDrop: each.first.status === 200 ? "the switch finished" : `the switch failed (${each.first.status})`,
        secondSwitchCalledProviderMeanwhile: each.secondCalledProviderWhileFirstDid,
        auditConsistent: each.auditConsistent,
      }));
      const asExpected = asExpectedOf(advisory, session, lease, redis);
      return {
        observed: {
          providerCallMs: callMs,
          throughTransactionPooler: config.transactionPooler,
          advisory,
          sessionAdvisory: session,
          lease,
          redis: redis ?? { measured: false, needs: redisMissing },
          comparison,
        },
        asExpected,
        explanation: (asExpected
          ? explanationAsExpected(advisory, session, lease, redis, leftovers)
          : explanationUnexpected(dropped, redis, leftovers)
        ).join(" "),
      };
    } finally {
      await endLeftoverLocks(probe).catch(() => undefined);
      await probe.end();
    }
  },
};
