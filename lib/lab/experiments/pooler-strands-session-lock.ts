import pg from "pg";
import { config } from "../../core/config";
import { advisoryKey } from "../strategies";
import { notTheGatesLock } from "../watch-gate";
import { ada, fact, slowSwitchCalls, type Lab } from "./lab";
import type { Experiment } from "./types";

const callMs = 200;

/** What PgBouncer says of itself (its admin console, the `pgbouncer` database on its port). */
async function poolerConfig(): Promise<{ poolMode: string | null; serverLifetimeS: number | null }> {
  const url = new URL(config.databaseUrl);
  url.pathname = "/pgbouncer";
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ key: string; value: string }>("SHOW CONFIG");
    const value = (key: string) => rows.find((row) => row.key === key)?.value ?? null;
    const lifetime = value("server_lifetime");
    return { poolMode: value("pool_mode"), serverLifetimeS: lifetime === null ? null : Number(lifetime) };
  } finally {
    await admin.end();
  }
}

/** The granted advisory locks of this database, but the experiment runner's own, as PostgreSQL lists them. */
async function advisoryLocks(probe: pg.Client) {
  const { rows } = await probe.query<{ pid: number; state: string }>(
    `SELECT a.pid, a.state FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database()
        AND a.application_name <> 'lab:experiment-run' AND ${notTheGatesLock("l")}`,
  );
  return rows;
}

/** The advisory locks granted now that were not before a switch answered; a fact on its lane, either way. */
async function locksLeftBy(lab: Lab, probe: pg.Client, before: { pid: number }[], operationId: string) {
  const left = (await advisoryLocks(probe)).filter((lock) => !before.some((each) => each.pid === lock.pid));
  lab.mark(
    operationId,
    left[0]
      ? `its advisory lock stays granted after it answered, on backend ${left[0].pid} (${left[0].state})`
      : "no advisory lock of it is left once it answered",
  );
  return left;
}

/** The lease beside it, through the same pooler: two clicks at once, then the lease and the audit. */
async function leaseBesideIt(lab: Lab) {
  await lab.configure({ strategy: "lease" });
  const [first, second] = await Promise.all([
    lab.switchTo(ada.email, "lease through PgBouncer: first click"),
    lab.switchTo(ada.email, "lease through PgBouncer: second click"),
  ]);
  return { first, second, leaseAfter: await lab.lease(), audit: await lab.audit() };
}

interface PoolerReading {
  pooler: Awaited<ReturnType<typeof poolerConfig>>;
  sessionSwitch: { status: number };
  stranded: { pid: number; state: string }[];
  anotherSessionTookIt: boolean;
  /** The lease's two clicks' statuses, sorted. */
  statuses: number[];
  leaseHeld: boolean;
  auditConsistent: boolean;
}

/** The run's story in words: the stranded session lock, then the lease through the same pooler. */
function explain(reading: PoolerReading, asExpected: boolean): string {
  const { pooler, sessionSwitch, stranded, anotherSessionTookIt, statuses, leaseHeld, auditConsistent } = reading;
  const lifetime = pooler.serverLifetimeS === null ? "its server_lifetime" : `${pooler.serverLifetimeS} s`;
  return asExpected
    ? `PgBouncer runs in ${pooler.poolMode} pooling. The session-advisory switch answered ` +
        `${sessionSwitch.status} and closed its client connection; yet PostgreSQL still lists its ` +
        `advisory lock granted, on backend ${stranded[0]!.pid}, now back in PgBouncer's pool ` +
        `(${stranded[0]!.state === "idle" ? "idle" : `${stranded[0]!.state}: the pooler has handed it on, the lock still on it`}): ` +
        "closing a client of a transaction pooler does not close the server connection that ran " +
        "pg_advisory_lock, and its pg_advisory_unlock, had it sent one, would have gone to whichever " +
        "server connection the pooler picked. Another session's pg_try_advisory_lock got false: " +
        "ada's switches under session-advisory now wait for their lock_timeout (or win at once, " +
        "when the pooler happens to give them that very backend, since a session's advisory locks are " +
        `re-entrant), until PgBouncer closes that server connection, after ${lifetime}. ` +
        "The lease, through the same pooler, needs nothing of the session: " +
        `the two clicks answered ${statuses.join(" and ")}, the lease is free again and the audit is ` +
        "consistent. The run ended the stranded backend (pg_terminate_backend), " +
        "so that the lab is usable again."
    : "Expected a stranded session lock behind a transaction pooler, and the lease unharmed beside it. " +
        `Measured: PgBouncer runs in ${pooler.poolMode} pooling; the session-advisory switch answered ` +
        `${sessionSwitch.status}; ${stranded.length} advisory lock(s) stayed granted ` +
        `(${stranded.map((lock) => `backend ${lock.pid}, ${lock.state}`).join("; ") || "none"}); ` +
        `another session ${anotherSessionTookIt ? "could" : "could not"} take the lock. ` +
        `The lease's two clicks answered ${statuses.join(" and ")}, the lease is ` +
        `${leaseHeld ? "still held" : "free"}, and the audit is ` +
        `${auditConsistent ? "consistent" : "inconsistent"}.`;
}

export const poolerStrandsSessionLock: Experiment = {
  id: "pooler-strands-session-lock",
  title: "A session lock behind PgBouncer",
  question: "What becomes of a session advisory lock behind a pooler in transaction mode, and of the lease?",
  failureMode: "The pooler hands the locking session's server connection to others: the lock is stranded there",
  expected:
    "Through PgBouncer, `session-advisory` takes pg_advisory_lock on a server connection the pooler " +
    "gives back at once; the switch ends and closes its client, but the server connection stays open " +
    "in the pool, so the lock is still granted after the switch, on a backend back in the pool " +
    "(idle, or already handed on), and no other session can take it. The lease, " +
    "through the same pooler, switches, refuses a concurrent second click and is free afterwards.",
  tryNext:
    "With `npm run dev -- --pgbouncer`, choose `session-advisory`, click Make primary, " +
    "then SELECT pid, state FROM pg_locks JOIN pg_stat_activity USING (pid) " +
    "WHERE locktype = 'advisory' AND objsubid = 1 (a lock on one bigint key, as the strategy takes; the lab's " +
    "own gate takes a two-key one for a moment at each lease write).",
  needs: ["pgbouncer"],
  async run(lab) {
    const probe = new pg.Client({ connectionString: config.directDatabaseUrl, application_name: "lab:probe" });
    await probe.connect();
    let strandedPids: number[] = [];
    try {
      const pooler = await poolerConfig();
      await lab.fresh({ strategy: "session-advisory", provider: slowSwitchCalls(callMs) }, "through PgBouncer");
      const locksBefore = await advisoryLocks(probe);
      const sessionSwitch = await lab.switchTo(ada.github, "session-advisory through PgBouncer");
      // The switch has answered: its client connection is closed, which on a direct connection frees its lock.
      const stranded = await locksLeftBy(lab, probe, locksBefore, sessionSwitch.operationId);
      strandedPids = stranded.map((lock) => lock.pid);
      const { rows: tried } = await probe.query<{ taken: boolean }>(
        "SELECT pg_try_advisory_lock(hashtext($1)) AS taken",
        [advisoryKey(ada.userId)],
      );
      const anotherSessionTookIt = tried[0]!.taken;
      if (anotherSessionTookIt) await probe.query("SELECT pg_advisory_unlock_all()");

      const { first, second, leaseAfter, audit } = await leaseBesideIt(lab);
      const statuses = [first.status, second.status].sort();
      const asExpected =
        pooler.poolMode === "transaction" &&
        sessionSwitch.status === 200 &&
        stranded.length === 1 &&
        !anotherSessionTookIt &&
        statuses[0] === 200 &&
        statuses[1] === 409 &&
        !leaseAfter.held &&
        audit.consistent;
      return {
        observed: {
          pooler,
          sessionAdvisorySwitch: fact(sessionSwitch),
          locksGrantedAfterTheSwitch: stranded,
          anotherSessionTookIt,
          leaseClicks: [fact(first), fact(second)],
          leaseHeldAfter: leaseAfter.held,
          auditConsistent: audit.consistent,
          violations: audit.violations,
        },
        asExpected,
        explanation: explain(
          {
            pooler,
            sessionSwitch,
            stranded,
            anotherSessionTookIt,
            statuses,
            leaseHeld: leaseAfter.held,
            auditConsistent: audit.consistent,
          },
          asExpected,
        ),
      };
    } finally {
      // The stranded lock would outlive the run by up to an hour: end the server connection holding it.
      if (strandedPids.length > 0)
        await probe.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [strandedPids]);
      await probe.end();
    }
  },
};
