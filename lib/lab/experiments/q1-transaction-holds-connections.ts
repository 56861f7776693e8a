import { setTimeout as pause } from "node:timers/promises";
import { sql } from "kysely";
import { poolStats } from "../../core/db";
import { getUserView } from "../../switch/user-view";
import { instrumentDb } from "../instrument-db";
import { ada, appliedWrites, fact, slowSwitchCalls, type Lab } from "./lab";
import type { Experiment } from "./types";

const burstSize = 6;
const targets = [ada.github, ada.email, ada.apple];

/**
 * The most of the app's sessions PostgreSQL listed as idle in a transaction while `running()`, sampled every
 * 20 ms: each holds its connection while the switch waits outside the database (on the provider). The lab's
 * own sessions aside.
 */
async function mostIdleInTransaction(running: () => boolean): Promise<number> {
  let most = 0;
  while (running()) {
    const { rows } = await sql<{ sessions: number }>`
      SELECT count(*)::int AS sessions FROM pg_stat_activity
       WHERE datname = current_database() AND state = 'idle in transaction' AND application_name NOT LIKE 'lab:%'`.execute(
      instrumentDb(),
    );
    most = Math.max(most, rows[0]?.sessions ?? 0);
    await pause(20);
  }
  return most;
}

/** A burst of switches under `strategy`, with this instance's pool and a bystander's reads sampled meanwhile. */
async function burst(lab: Lab, strategy: "transaction" | "lease") {
  await lab.fresh({ strategy, provider: slowSwitchCalls(250) });
  let running = true;
  const pool = { mostInUse: 0, mostWaiting: 0, samples: 0, queuedSamples: 0 };
  const reads: number[] = [];
  const sampling = (async () => {
    while (running) {
      const stats = poolStats();
      pool.mostInUse = Math.max(pool.mostInUse, stats.inUse);
      pool.mostWaiting = Math.max(pool.mostWaiting, stats.waiting);
      pool.samples++;
      if (stats.waiting > 0) pool.queuedSamples++;
      await pause(20);
    }
  })();
  const serverSampling = mostIdleInTransaction(() => running);
  // A bystander (grace, who switches nothing) reads her page over and over.
  const bystander = (async () => {
    while (running) {
      const started = performance.now();
      await getUserView(lab.db, "grace");
      reads.push(performance.now() - started);
      await pause(50);
    }
  })();
  const attempts = await Promise.all(
    Array.from({ length: burstSize }, (_, index) =>
      lab.switchTo(targets[index % targets.length]!, `${strategy} #${index + 1}`),
    ),
  );
  running = false;
  const [, idleInTransactionAtMost] = await Promise.all([sampling, serverSampling, bystander]);
  const sorted = reads.sort((a, b) => a - b);
  return {
    strategy,
    poolSize: poolStats().size,
    connectionsHeldAtMost: pool.mostInUse,
    poolQueueAtMost: pool.mostWaiting,
    idleInTransactionAtMost,
    // A burst's first statements queue briefly under any strategy; what differs is for how long.
    shareOfTimeQueued: Math.round((pool.queuedSamples / Math.max(1, pool.samples)) * 100) / 100,
    bystanderReadMs: {
      reads: sorted.length,
      median: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0),
      max: Math.round(sorted.at(-1) ?? 0),
    },
    statuses: attempts.map((attempt) => attempt.status),
    durationMs:
      Math.max(...attempts.map((attempt) => attempt.endedMs)) -
      Math.min(...attempts.map((attempt) => attempt.startedMs)),
  };
}

type BurstReading = Awaited<ReturnType<typeof burst>>;

/** The run's story in words: the burst under each strategy, then the rolled-back transaction. */
function explain(
  lease: BurstReading,
  transaction: BurstReading,
  audit: { consistent: boolean; violations: string[] },
  unlinkApplied: boolean,
  asExpected: boolean,
): string {
  return asExpected
    ? `${burstSize} switches at once, 250 ms per provider call, a pool of ${transaction.poolSize}. ` +
        `Under transaction, up to ${transaction.connectionsHeldAtMost} connections were held (idle in ` +
        "transaction, waiting on the provider or on the row lock) and up to " +
        `${transaction.poolQueueAtMost} requests queued for the pool, ` +
        `${Math.round(transaction.shareOfTimeQueued * 100)}% of the time; ` +
        `a bystander's read took up to ${transaction.bystanderReadMs.max} ms (median ` +
        `${transaction.bystanderReadMs.median} ms); up to ${transaction.idleInTransactionAtMost} session(s) ` +
        "sat idle in transaction. Under lease, none did: the burst's acquires queued " +
        `${Math.round(lease.shareOfTimeQueued * 100)}% of the time (each UPDATE takes milliseconds), ` +
        `and the same read took at most ${lease.bystanderReadMs.max} ms: ` +
        "the lease holds a row's columns, not a connection. Then a transaction whose link failed rolled " +
        "back its database work, but the provider's unlink had already been applied and stayed: " +
        `${audit.violations.join("; ")}. A database transaction cannot roll back a third party.`
    : "Expected transaction to hold the whole pool and queue the bystander, " +
        "and the lease to hold none. Measured: transaction held up to " +
        `${transaction.connectionsHeldAtMost} of the pool's ${transaction.poolSize} connections with up ` +
        `to ${transaction.poolQueueAtMost} queued, and the bystander's slowest read took ` +
        `${transaction.bystanderReadMs.max} ms; up to ${transaction.idleInTransactionAtMost} session(s) sat idle in ` +
        `transaction. Under the lease, up to ${lease.idleInTransactionAtMost} did, the pool was queued ` +
        `${Math.round(lease.shareOfTimeQueued * 100)}% of the time and the bystander's slowest read took ` +
        `${lease.bystanderReadMs.max} ms. The rolled-back transaction's unlink was ` +
        `${unlinkApplied ? "applied" : "not applied"} at the provider, and the audit is ` +
        `${audit.consistent ? "consistent" : "inconsistent"}.`;
}

export const transactionHoldsConnections: Experiment = {
  id: "q1-transaction-holds-connections",
  title: "Why not a transaction around the calls?",
  question: "Why not just SELECT … FOR UPDATE in a transaction around the provider calls?",
  failureMode: null,
  expected:
    "Under `transaction` every switch (the waiting ones too) holds a pooled connection for the whole " +
    "provider call: the pool fills, a queue forms and a bystander's reads wait; " +
    "under `lease` they don't. And a rollback does not undo the provider's unlink.",
  tryNext: "Fire a burst of 10 on the main page under `transaction` and watch the pool panel; then under `lease`.",
  async run(lab) {
    const lease = await burst(lab, "lease");
    const transaction = await burst(lab, "transaction");
    // A rollback: the link fails after the unlink was applied; the transaction rolls back, the provider does not.
    await lab.fresh({ strategy: "transaction", provider: { ...slowSwitchCalls(250), script: { link: ["500"] } } });
    const rolledBack = await lab.switchTo(ada.github, "transaction whose link fails (rolled back)");
    const [audit, calls] = await Promise.all([lab.audit(), lab.calls()]);
    const unlinkApplied = calls.some(
      (call) => call.operationId === rolledBack.operationId && call.method === "DELETE" && call.status === 200,
    );
    const asExpected =
      transaction.connectionsHeldAtMost >= transaction.poolSize &&
      transaction.poolQueueAtMost > 0 &&
      // A connection held across a provider call sits idle in its transaction; a lease's statements hold
      // none between them. (How long the pool queued is reported: on a busy machine the lease's short
      // statements queue too.)
      transaction.idleInTransactionAtMost >= 1 &&
      lease.idleInTransactionAtMost === 0 &&
      transaction.bystanderReadMs.max > lease.bystanderReadMs.max &&
      unlinkApplied &&
      !audit.consistent;
    return {
      observed: {
        lease,
        transaction,
        rollback: {
          switch: fact(rolledBack),
          providerWritesApplied: appliedWrites(calls, rolledBack.operationId),
          unlinkAppliedAtProvider: unlinkApplied,
          auditConsistent: audit.consistent,
          violations: audit.violations,
        },
      },
      asExpected,
      explanation: explain(lease, transaction, audit, unlinkApplied, asExpected),
    };
  },
};
