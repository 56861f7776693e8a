import { setTimeout as pause } from "node:timers/promises";
import { sql, type Kysely } from "kysely";
import { createDb } from "../../../db/connection";
import type { Database } from "../../../db/schema";
import { config } from "../../core/config";
import { OperationInProgress } from "../../core/problems";
import { findUser, identityActionLease } from "../../switch/users";
import type { DatabaseNode } from "../database-nodes";
import { answerOf, startRecording, type OperationRecorder } from "../lane-recorder";
import { laneWriter } from "../lane-writer";
import {
  databaseOperations,
  keepingReplicationMode,
  leaseOn,
  pausedBefore,
  plus,
  primaryAndStandby,
  timelineNow,
  untilWritable,
} from "./failover-facts";
import { ada, fact, slowSwitchCalls, type Lab } from "./lab";
import type { Experiment } from "./types";

// Long enough that no renewal (every TTL / 3) falls inside the holder's pause, the failover included.
const ttlMs = 30_000;
const cancellerName = "lab:sync-cancel";
// The cancelled acquire's own statement_timeout: the run waits twice as long before it cancels the wait itself.
const statementTimeoutMs = 500;
const database = databaseOperations;

const freshSync = async (lab: Lab, note: string) => {
  const settings = await lab.fresh(
    {
      strategy: "lease",
      leaseTtlMs: ttlMs,
      // The reconciler would take the lease to settle a switch: this run shows what is left.
      reconcileAfterMs: null,
      provider: { ...slowSwitchCalls(150), enforceFencing: true, fenceGenerations: true },
    },
    note,
  );
  await database.mode("sync");
  return settings;
};

/** The primary dies and the standby is promoted; how long until the app writes again, and on which timeline. */
async function failOver(lab: Lab, primary: DatabaseNode, standby: DatabaseNode, onLane: string, why: string) {
  await database.kill(primary.name);
  await database.promote(standby.name);
  lab.mark(onLane, `the primary ${primary.name} is killed (SIGKILL) and the standby ${standby.name} promoted: ${why}`);
  const writableAfterMs = await untilWritable(lab.db);
  return { node: standby.name, writableAfterMs, timeline: await timelineNow(lab.db) };
}

const shortLease = (lease: Awaited<ReturnType<typeof leaseOn>>) =>
  lease && { held: lease.held, fence: lease.fence, generation: lease.generation };

/**
 * The lease across a synchronous failover: a switch holds it, paused right before its unlink; the primary is
 * killed and the standby promoted; a second switch on the promoted node is refused; the first one resumes there.
 */
async function keptAcquisition(lab: Lab) {
  const settings = await freshSync(lab, "the lease held across a promotion");
  const { primary, standby } = await primaryAndStandby();
  const first = pausedBefore(settings, "unlink", "paused on purpose after its last check, right before its unlink");
  const holder = lab.switchTo(ada.github, "first switch (pauses right before its unlink)", first.own);
  await first.reached;
  const holderId = lab.operationIds.at(-1)!;
  const held = { onPrimary: shortLease(await leaseOn(primary)), onStandby: shortLease(await leaseOn(standby)) };
  const promoted = await failOver(
    lab,
    primary,
    standby,
    holderId,
    "it had applied every commit the primary acknowledged",
  );
  const onPromoted = await lab.lease();
  const refused = await lab.switchTo(ada.email, "second switch, on the promoted standby");
  first.resume();
  const holderAnswer = await holder;
  const [audit, user, after] = await Promise.all([lab.audit(), findUser(lab.db, ada.userId), lab.lease()]);
  await database.rejoin(primary.name);
  return {
    held,
    promoted,
    onPromoted: {
      held: onPromoted.held,
      fence: String(onPromoted.fence),
      generation: String(onPromoted.generation),
      expiresAt: onPromoted.expiresAt?.toISOString() ?? null,
    },
    refused: fact(refused),
    holder: fact(holderAnswer),
    after: { held: after.held, fence: String(after.fence) },
    localPrimary: user?.primaryIdentityId ?? null,
    auditConsistent: audit.consistent,
    violations: audit.violations,
  };
}

/**
 * Polls the primary until `pid` has waited for the standby's acknowledgement (wait event SyncRep) twice its
 * statement_timeout, so that the run has seen the timeout not end the wait; how long its statement had run.
 */
async function untilWaitedForStandby(lab: Lab, pid: number, limitMs = 10_000): Promise<number> {
  const since = lab.sinceStart();
  for (;;) {
    const { rows } = await sql<{ waitedMs: number | null }>`
      SELECT (extract(epoch FROM clock_timestamp() - query_start) * 1000)::int AS "waitedMs"
        FROM pg_stat_activity WHERE pid = ${pid} AND wait_event = 'SyncRep'`.execute(lab.db);
    const waitedMs = rows[0]?.waitedMs ?? 0;
    if (waitedMs >= 2 * statementTimeoutMs) return waitedMs;
    if (lab.sinceStart() - since > limitMs) throw new Error(`the acquire (pid ${pid}) never waited for the standby`);
    await pause(20);
  }
}

/**
 * The acquire on its lane, answered as a route answers: 200 when the statement answers a lease, 409 when it is
 * held, and for an error (the cancelled wait among them) what `problemFor` says.
 */
async function acquireOnLane(lane: OperationRecorder, db: Kysely<Database>, primary: DatabaseNode): Promise<void> {
  const ended = lane.start("acquire", "the acquiring statement: its commit waits for the standby's ack");
  let taken: Awaited<ReturnType<typeof identityActionLease.acquire>>;
  try {
    taken = await identityActionLease.acquire(db, ada.userId, { ttlMs });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    ended("unfinished", `committed on ${primary.name}, not known to be replicated: ${why}`);
    const { status, problemType } = answerOf(error);
    await lane.answer(status, problemType);
    throw error;
  }
  if (!taken.acquired) {
    ended("refused");
    const held = taken.reason === "held" ? taken : null;
    const refused = new OperationInProgress(held?.heldUntil ?? null, held?.remainingMs ?? 0);
    await lane.answer(refused.status, refused.type);
    throw refused;
  }
  ended("won", `1 row: won, fence ${taken.lease.fence} (generation ${taken.lease.generation})`);
  await lane.answer(200, null);
}

/**
 * A bare acquire of ada's lease on a connection of its own, drawn as a lane; once its commit waits for the
 * standby, a cancel request (pg_cancel_backend) ends the wait. What it answered, and PostgreSQL's warnings.
 */
async function cancelledAcquire(lab: Lab, primary: DatabaseNode) {
  const url = `${config.directDatabaseUrl}${config.directDatabaseUrl.includes("?") ? "&" : "?"}application_name=${cancellerName}`;
  const { db, pool } = createDb(url, 1);
  const warnings: string[] = [];
  pool.on("connect", (client) =>
    client.on("notice", (notice) => warnings.push(`${notice.severity} ${notice.code}: ${notice.message}`)),
  );
  try {
    await sql`SET statement_timeout = ${sql.lit(statementTimeoutMs)}`.execute(db);
    const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db);
    const pid = rows[0]!.pid;
    const drawn: { lane?: OperationRecorder } = {};
    const answer = lab.acquire("an acquire whose wait for the standby is cancelled", async (operationId) => {
      const lane = await startRecording({ userId: ada.userId, toIdentityId: null, strategy: "lease", operationId });
      drawn.lane = lane;
      lane.admit(); // the lab's own acquire: no session to check
      await acquireOnLane(lane, db, primary);
    });
    const acquireId = lab.operationIds.at(-1)!;
    const waitedMs = await untilWaitedForStandby(lab, pid);
    await sql`SELECT pg_cancel_backend(${pid})`.execute(lab.db);
    lab.mark(
      acquireId,
      `its commit waited for the standby (SyncRep) ${waitedMs} ms, past its statement_timeout of ` +
        `${statementTimeoutMs} ms; cancelled (pg_cancel_backend)`,
    );
    const answered = fact(await answer);
    return { acquireId, answer: answered, waitedMs, warnings, lane: drawn.lane! };
  } finally {
    await db.destroy();
  }
}

/**
 * The lane's row went to the old primary, lost with it (as every write made there after replication stopped):
 * written again on the new one, as it was; how long until it could be read there.
 */
async function drawnAgain(lab: Lab, lane: OperationRecorder, limitMs = 10_000): Promise<number> {
  const since = lab.sinceStart();
  const there = async () =>
    (
      await lab.db
        .selectFrom("operation_lanes")
        .select("operation_id")
        .where("operation_id", "=", lane.operationId)
        .execute()
    ).length > 0;
  // Due again: the writer's next window writes it (and, while writes fail, the window after that).
  laneWriter.request(lane);
  while (!(await there())) {
    if (lab.sinceStart() - since > limitMs) throw new Error(`the lane ${lane.operationId} could not be written again`);
    await pause(25);
  }
  return lab.sinceStart() - since;
}

/**
 * The cancel leak: replication stopped under synchronous commit, so every commit waits; an acquire's wait is
 * cancelled, which leaves it committed on the primary; the primary dies, the standby is promoted; a switch there.
 */
async function cancelLeak(lab: Lab) {
  await freshSync(lab, "an acquire's wait for the standby cancelled");
  const { primary, standby } = await primaryAndStandby();
  const before = shortLease(await leaseOn(primary));
  await database.stopReplication();
  const cancelled = await cancelledAcquire(lab, primary);
  const leaked = { onPrimary: shortLease(await leaseOn(primary)), onStandby: shortLease(await leaseOn(standby)) };
  lab.mark(
    cancelled.acquireId,
    `read on each node: ${primary.name} has the lease (fence ${leaked.onPrimary?.fence}), ` +
      `${standby.name} does not (fence ${leaked.onStandby?.fence})`,
  );
  const why = `it never received the cancelled acquire`;
  const promoted = await failOver(lab, primary, standby, cancelled.acquireId, why);
  const laneRewrittenMs = await drawnAgain(lab, cancelled.lane);
  const onPromoted = shortLease(await leaseOn(standby));
  const next = await lab.switchTo(ada.email, "a switch on the promoted standby");
  const [audit, user, taken] = await Promise.all([lab.audit(), findUser(lab.db, ada.userId), lab.lease()]);
  await database.rejoin(primary.name);
  return {
    before,
    cancelled: { ...cancelled.answer, waitedMs: cancelled.waitedMs, warnings: cancelled.warnings },
    leaked,
    promoted: { ...promoted, laneRewrittenMs },
    onPromoted,
    next: { ...fact(next), fence: String(taken.fence), generation: String(taken.generation) },
    localPrimary: user?.primaryIdentityId ?? null,
    auditConsistent: audit.consistent,
    violations: audit.violations,
  };
}

type Kept = Awaited<ReturnType<typeof keptAcquisition>>;
type Leak = Awaited<ReturnType<typeof cancelLeak>>;

/** The promoted standby had the lease, refused the second switch, and let the holder finish. */
function keptAsExpected(kept: Kept): boolean {
  return (
    kept.held.onPrimary?.held === true &&
    kept.held.onStandby?.held === true &&
    kept.held.onStandby.fence === kept.held.onPrimary.fence &&
    kept.onPromoted.held &&
    kept.onPromoted.fence === kept.held.onPrimary.fence &&
    kept.refused.status === 409 &&
    kept.refused.problemType === "operation-in-progress" &&
    kept.holder.status === 200 &&
    kept.localPrimary === ada.github &&
    kept.auditConsistent
  );
}

/** The cancelled acquire: answered 503, committed on the old primary, absent on the new one, its fence issued again. */
function leakAsExpected(leak: Leak): boolean {
  const fence = plus(leak.before?.fence, 1);
  return (
    leak.cancelled.waitedMs >= 2 * statementTimeoutMs &&
    leak.cancelled.status === 503 &&
    leak.cancelled.problemType === "database-unavailable" &&
    leak.cancelled.warnings.some((warning) => /canceling wait for synchronous replication/.test(warning)) &&
    leak.leaked.onPrimary?.held === true &&
    leak.leaked.onPrimary.fence === fence &&
    leak.leaked.onStandby?.held === false &&
    leak.leaked.onStandby.fence === leak.before?.fence &&
    leak.onPromoted?.held === false &&
    leak.next.status === 200 &&
    leak.next.fence === fence &&
    BigInt(leak.next.generation) > BigInt(leak.leaked.onPrimary.generation) &&
    leak.localPrimary === ada.email &&
    leak.auditConsistent
  );
}

function explanation(kept: Kept, leak: Leak): string[] {
  const { onPromoted } = kept;
  return [
    "Replication was synchronous (synchronous_commit = remote_apply): the primary acknowledged a commit only " +
      `once the standby had applied it. A first switch took fence ${kept.held.onPrimary?.fence} and paused ` +
      `before its unlink; read on each node, both had its lease.`,
    `The primary was killed and the standby promoted: the app wrote again ${kept.promoted.writableAfterMs} ms ` +
      `later, on timeline ${kept.promoted.timeline}. The promoted node still had the lease (fence ` +
      `${onPromoted.fence}, held until ${onPromoted.expiresAt}): a second switch was refused ` +
      `(${kept.refused.status} ${kept.refused.problemType}), as any would be until then. The first switch woke, finished ` +
      `on the new primary (${kept.holder.status}), and the audit is ${kept.auditConsistent ? "consistent" : "not"}: ` +
      "nothing acknowledged was lost.",
    "The leak: replication stopped on purpose, so every commit waited for a standby that never answered. An " +
      `acquire's commit waited ${leak.cancelled.waitedMs} ms, past its statement_timeout of ${statementTimeoutMs} ms ` +
      "(PostgreSQL stops a statement's timer before its commit, so the timeout never ends that wait), and was " +
      "cancelled with pg_cancel_backend, as a client's cancel request would. PostgreSQL " +
      `answered the statement as a success, with a warning: "${leak.cancelled.warnings.join("; ")}".`,
    `It was committed on the primary (fence ${leak.leaked.onPrimary?.fence}, held, read there) and not on the ` +
      `standby (fence ${leak.leaked.onStandby?.fence}). The app answered it ${leak.cancelled.status} ` +
      `${leak.cancelled.problemType}: neither taken nor not taken, since which one holds depends on a failover.`,
    `The primary was killed and the standby promoted: the lease was not there (held: ${leak.onPromoted?.held}). ` +
      `A switch took it with fence ${leak.next.fence} again, in generation ${leak.next.generation} (the ` +
      `cancelled acquire's was ${leak.leaked.onPrimary?.generation}), and finished (${leak.next.status}).`,
    "Synchronous replication keeps every acknowledged acquisition; a cancelled wait is not acknowledged, and " +
      "only the generation keeps its fence from being issued again as the same pair.",
  ];
}

function unexpected(kept: Kept, leak: Leak): string {
  return (
    "Expected the promoted standby to hold the lease and the cancelled acquire to be on the old primary only. " +
    `Measured, kept: on the primary ${JSON.stringify(kept.held.onPrimary)}, on the standby ` +
    `${JSON.stringify(kept.held.onStandby)}, promoted ${JSON.stringify(kept.onPromoted)}, the second switch ` +
    `${kept.refused.status} ${kept.refused.problemType}, the first ${kept.holder.status}, the audit ` +
    `${kept.auditConsistent ? "consistent" : kept.violations.join("; ")}. Cancelled: answered ` +
    `${leak.cancelled.status} ${leak.cancelled.problemType}, warnings ${JSON.stringify(leak.cancelled.warnings)}, ` +
    `on the primary ${JSON.stringify(leak.leaked.onPrimary)}, on the standby ${JSON.stringify(leak.leaked.onStandby)}, ` +
    `promoted ${JSON.stringify(leak.onPromoted)}, the next switch ${leak.next.status} with fence ${leak.next.fence}, ` +
    `the audit ${leak.auditConsistent ? "consistent" : leak.violations.join("; ")}.`
  );
}

export const failoverSyncKeepsLease: Experiment = {
  id: "failover-sync-keeps-lease",
  title: "A synchronous standby promoted: the lease kept, and the cancel that leaks",
  question: "What does a failover to a synchronous replica keep of a lease, and what does it still lose?",
  failureMode: "Sync failover: a cancelled commit wait leaves an acquisition on the old primary only",
  expected:
    "With synchronous replication (remote_apply), a switch holds the lease when the primary is killed and the " +
    "standby promoted: the promoted node has it, a second switch is refused (409) until its expiry, the first " +
    "one finishes and the audit is consistent. Then, replication stopped: an acquire whose commit waits for the " +
    "standby is cancelled; PostgreSQL warns that it committed locally; it is on the old primary and absent on the " +
    "new one, where a switch gets its fence number again in a greater generation. The app answers the cancelled " +
    "acquire 503, not 200 and not 409.",
  tryNext:
    "With npm run dev -- --replica sync, stop replication (curl -X POST the operator's /replication/pause) and " +
    "click Make primary: on the primary, pg_stat_activity shows the app's session waiting on SyncRep. Cancel it " +
    "(SELECT pg_cancel_backend(pid)), read ada's row on each node, then kill the primary and promote the standby.",
  needs: ["postgresql-15"],
  run: (lab) =>
    keepingReplicationMode(async () => {
      const kept = await keptAcquisition(lab);
      const leak = await cancelLeak(lab);
      const expected = keptAsExpected(kept) && leakAsExpected(leak);
      return {
        observed: { ttlMs, statementTimeoutMs, kept, cancelLeak: leak },
        asExpected: expected,
        explanation: expected ? explanation(kept, leak).join(" ") : unexpected(kept, leak),
      };
    }),
};
