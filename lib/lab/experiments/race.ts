/**
 * N acquires of ada's lease at the same instant, each on a connection of its own, as the database sees
 * them. Each runs the real acquiring statement in a transaction; the winner's stays open `holdMs` after it,
 * so the row lock its UPDATE took is held long enough to be seen: meanwhile a sampler reads who waits, from
 * `pg_stat_activity` and `pg_locks`. (Autocommitted, as in the app, the same wait lasts microseconds.) The
 * losers commit at once, as the app's autocommitted UPDATE does: a 0-row UPDATE that waited keeps the row's
 * lock until its own commit, so losers that held their transactions too would queue one behind another.
 * Straight to PostgreSQL: a pooler in front would queue the contenders for its own connections instead.
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../../../db/schema";
import { createDb } from "../../../db/connection";
import { config } from "../../core/config";
import { OperationInProgress } from "../../core/problems";
import { identityActionLease } from "../../switch/users";
import { answerOf, startRecording } from "../lane-recorder";
import { ada, type Lab } from "./lab";

const applicationName = "lab:race";

export const acquireStatement = `UPDATE users SET identity_action_locked_at = now(), identity_action_locked_until = now() + $ttl,
       identity_action_lock_token = gen_random_uuid(), identity_action_fence = identity_action_fence + 1
 WHERE id = $1 AND (identity_action_locked_until IS NULL OR identity_action_locked_until < now())
RETURNING identity_action_lock_token, identity_action_fence, identity_action_locked_until`;

interface WaitSample {
  pid: number;
  state: string | null;
  wait_event_type: string | null;
  wait_event: string | null;
  locktype: string;
  mode: string;
}

/** The most sessions of the race seen waiting at once on ada's row, sampled every 10 ms while `running()`. */
async function mostWaitingWhile(probe: Kysely<Database>, running: () => boolean): Promise<WaitSample[]> {
  let mostWaiting: WaitSample[] = [];
  while (running()) {
    // Waiting on the row (its tuple, or the holder's transaction), in this lab's database: a commit
    // also waits, briefly, for the cluster's NOTIFY queue lock when another database notifies at once.
    const waiting = await sql<WaitSample>`
      SELECT DISTINCT ON (a.pid) a.pid, a.state, a.wait_event_type, a.wait_event, l.locktype, l.mode
        FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid AND NOT l.granted
       WHERE a.application_name = ${applicationName} AND a.datname = current_database()
         AND l.locktype IN ('transactionid', 'tuple')`.execute(probe);
    if (waiting.rows.length > mostWaiting.length) mostWaiting = waiting.rows;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return mostWaiting;
}

/**
 * Contender `index`: a request of the run, drawn as a lane of its own: its acquire phase, won or refused, and
 * the winner's lease. A loser is answered as the route answers it: 409.
 */
async function contend(
  lab: Lab,
  racePool: Kysely<Database>,
  index: number,
  contenders: number,
  started: number,
  holdMs: number,
) {
  const timing = { acquired: false, answeredMs: 0, committedMs: 0 };
  await lab.acquire(`contender ${index + 1} of ${contenders}`, async (operationId) => {
    const lane = await startRecording({ userId: ada.userId, toIdentityId: null, strategy: "lease", operationId });
    let refusal: Promise<void> | null = null;
    let heldUntil: Date | null = null;
    await racePool.transaction().execute(async (trx) => {
      lane.acquiring();
      const acquisition = await identityActionLease.acquire(trx, ada.userId, { ttlMs: 5_000 });
      timing.answeredMs = Math.round(performance.now() - started);
      timing.acquired = acquisition.acquired;
      if (acquisition.acquired) {
        void lane.leaseEvent({ kind: "acquired", lease: acquisition.lease });
        await sql`SELECT pg_sleep(${holdMs / 1000})`.execute(trx);
        return;
      }
      // Ada exists (the run reset the seed): 0 rows means held. The phase ends now; the refusal's
      // words are written after the commit, not inside the transaction.
      heldUntil = acquisition.reason === "held" ? acquisition.heldUntil : null;
      refusal = lane.leaseEvent({ kind: "refused", heldUntil });
    });
    timing.committedMs = Math.round(performance.now() - started);
    await refusal;
    if (timing.acquired) return void (await lane.answer(200, null));
    const refused = new OperationInProgress(heldUntil, 0);
    const answer = answerOf(refused);
    await lane.answer(answer.status, answer.problemType);
    throw refused;
  });
  return timing;
}

export async function raceToAcquire(lab: Lab, requested: number, holdMs: number) {
  const { db: probe, pool: probePool } = createDb(config.directDatabaseUrl, 2);
  // A shared server: leave connections for everyone else.
  const free = await sql<{ free: number }>`
    SELECT current_setting('max_connections')::int - count(*)::int AS free FROM pg_stat_activity`.execute(probe);
  const contenders = Math.max(2, Math.min(requested, (free.rows[0]?.free ?? 0) - 20));
  const racePool = createDb(
    `${config.directDatabaseUrl}${config.directDatabaseUrl.includes("?") ? "&" : "?"}application_name=${applicationName}`,
    contenders,
  );
  try {
    const before = await identityActionLease.inspect(lab.db, ada.userId);
    // Every contender connects first, so that the UPDATEs leave at the same instant.
    const clients = await Promise.all(Array.from({ length: contenders }, () => racePool.pool.connect()));
    clients.forEach((client) => client.release());

    let sampling = true;
    const sampler = mostWaitingWhile(probe, () => sampling);

    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: contenders }, (_, index) => contend(lab, racePool.db, index, contenders, started, holdMs)),
    );
    sampling = false;
    const mostWaiting = await sampler;
    const after = await identityActionLease.inspect(lab.db, ada.userId);
    const losers = results
      .filter((result) => !result.acquired)
      .map((result) => result.answeredMs)
      .sort((a, b) => a - b);
    const row = (state: typeof before) => ({
      lockedAt: state?.lockedAt?.toISOString() ?? null,
      expiresAt: state?.expiresAt?.toISOString() ?? null,
      fence: state?.fence.toString() ?? null,
    });
    return {
      contenders,
      statement: acquireStatement,
      rowsUpdated: results.filter((result) => result.acquired).length,
      matchedZeroRows: losers.length,
      winnerAnsweredMs: results.find((result) => result.acquired)?.answeredMs ?? null,
      winnerCommittedMs: results.find((result) => result.acquired)?.committedMs ?? null,
      loserWaitMs: { min: losers[0] ?? null, max: losers.at(-1) ?? null },
      commitHeldMs: holdMs,
      rowBefore: row(before),
      rowAfter: row(after),
      waitingSessionsSeen: mostWaiting.length,
      waitingSessions: mostWaiting.slice(0, 5),
    };
  } finally {
    await racePool.db.destroy();
    await probePool.end();
  }
}
