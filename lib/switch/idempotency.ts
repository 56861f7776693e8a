/**
 * Idempotency keys: the first request with a key runs and its answer is stored; a repeat with the same
 * key (same user) gets that answer without running again, a problem replayed as the same problem; the
 * same key with another body is a 422. A claim whose request died without answering goes stale after
 * `staleAfterMs` and may be run again. A record is kept `idempotencyRecordTtlMs` (24 hours, as Stripe keeps
 * them): after that it is neither answered nor in the way, and each claim deletes a few expired ones.
 */
import { createHash, randomUUID } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { z } from "zod";
import type { Database } from "../../db/schema";
import {
  IdempotencyKeyReused,
  IdentityNotLinked,
  NotSignedIn,
  NotYourUser,
  OperationInProgress,
  Problem,
  ReplayedProblem,
  UserNotFound,
} from "../core/problems";

export const idempotencyKeySchema = z.string().min(1).max(255);

export const idempotencyRecordTtlMs = 24 * 60 * 60 * 1000;

// Enough to keep up with the claims that add records, few enough to keep a claim quick.
const expiredDeletedPerClaim = 100;

// A claim refused before it ran is deleted (see runAndStore), so the key can be free again by the time
// a repeat reads it: the repeat claims it afresh, this many times at most before it says "in progress".
const claimAttempts = 5;

interface Scope {
  userId: string;
  key: string;
  /** What makes two requests "the same": hashed and compared. */
  request: unknown;
  staleAfterMs: number;
  /**
   * Refuses a caller that may not act for the user (throws its problem) before it learns anything of a request
   * made with the key: the stored answer, or that the key was used for another body. Scoped by the user named,
   * a key is that user's; whoever else names the user is refused as the request itself would be.
   */
  mayLearn: () => Promise<void>;
}

const expiredBefore = sql<Date>`now() - ${idempotencyRecordTtlMs} * interval '1 millisecond'`;

export async function withIdempotencyKey<T>(
  db: Kysely<Database>,
  scope: Scope,
  run: (operationId: string) => Promise<T>,
): Promise<T> {
  const requestHash = createHash("sha256").update(JSON.stringify(scope.request)).digest("hex");
  for (let attempt = 0; attempt < claimAttempts; attempt++) {
    const operationId = randomUUID();
    if (await claim(db, scope, requestHash, operationId)) return runAndStore(db, scope, operationId, run);

    const existing = await db
      .selectFrom("idempotency_records")
      .select([
        "request_hash",
        "operation_id",
        "status",
        "body",
        "headers",
        sql<boolean>`created_at < now() - ${scope.staleAfterMs} * interval '1 millisecond'`.as("stale"),
      ])
      .where("user_id", "=", scope.userId)
      .where("key", "=", scope.key)
      .where("created_at", ">=", expiredBefore)
      .executeTakeFirst();
    // Gone since the claim failed (refused before it ran) or expired meanwhile: claim it again.
    if (!existing) continue;
    await scope.mayLearn();
    if (existing.request_hash !== requestHash) throw new IdempotencyKeyReused();
    if (existing.status === 200) return existing.body as T;
    if (existing.status !== null)
      throw new ReplayedProblem(existing.status, existing.body as Record<string, unknown>, existing.headers ?? {});
    if (existing.stale) {
      // The first request died before answering: the one that takes the claim over runs again.
      const takenOver = await db
        .updateTable("idempotency_records")
        .set({ operation_id: operationId })
        .where("user_id", "=", scope.userId)
        .where("key", "=", scope.key)
        .where("operation_id", "=", existing.operation_id)
        .where("status", "is", null)
        .executeTakeFirst();
      if (takenOver.numUpdatedRows === 1n) return runAndStore(db, scope, operationId, run);
    }
    break;
  }
  // The first request with this key is still running (no lease to name: expiresAt is null).
  throw new OperationInProgress(
    null,
    1_000,
    "The first request with this Idempotency-Key is still running; repeat it when that one has answered.",
  );
}

/**
 * Claims the key for `operationId`: a new record, or one that expired, started afresh. In the same
 * statement, a few other expired records are deleted (rows another claim is deleting are skipped, so two
 * claims never wait on each other).
 */
async function claim(db: Kysely<Database>, scope: Scope, requestHash: string, operationId: string): Promise<boolean> {
  const fresh = { request_hash: requestHash, operation_id: operationId, status: null, body: null, headers: null };
  const claimed = await db
    .with("swept", (db) =>
      db.deleteFrom("idempotency_records").where((eb) =>
        eb(
          eb.refTuple("user_id", "key"),
          "in",
          eb
            .selectFrom("idempotency_records")
            .select(["user_id", "key"])
            .where("created_at", "<", expiredBefore)
            .where((eb) => eb.not(eb.and([eb("user_id", "=", scope.userId), eb("key", "=", scope.key)])))
            .orderBy("created_at")
            .limit(expiredDeletedPerClaim)
            .forUpdate()
            .skipLocked()
            .$asTuple("user_id", "key"),
        ),
      ),
    )
    .insertInto("idempotency_records")
    .values({ user_id: scope.userId, key: scope.key, ...fresh })
    .onConflict((conflict) =>
      conflict
        .columns(["user_id", "key"])
        .doUpdateSet({ ...fresh, created_at: sql<Date>`now()` })
        .where("idempotency_records.created_at", "<", expiredBefore),
    )
    .returning("operation_id")
    .executeTakeFirst();
  return claimed !== undefined;
}

async function runAndStore<T>(
  db: Kysely<Database>,
  scope: Scope,
  operationId: string,
  run: (operationId: string) => Promise<T>,
): Promise<T> {
  const store = (status: number, body: unknown, headers: Record<string, string>) =>
    db
      .updateTable("idempotency_records")
      .set({ status, body: JSON.stringify(body), headers: JSON.stringify(headers) })
      .where("user_id", "=", scope.userId)
      .where("key", "=", scope.key)
      .where("operation_id", "=", operationId)
      .execute();
  let result: T;
  try {
    result = await run(operationId);
  } catch (error) {
    // Not started (another operation held the user, the caller may not act for this user, or the request names
    // no user or identity of the user's: refused as a malformed one is, before any work) or failed unexpectedly:
    // nothing to remember, as Stripe keeps no answer to a request that failed validation. A key claimed by a
    // caller without the right is no one's answer.
    const notStarted = [OperationInProgress, NotSignedIn, NotYourUser, UserNotFound, IdentityNotLinked].some(
      (refusal) => error instanceof refusal,
    );
    if (!(error instanceof Problem) || notStarted) {
      await db
        .deleteFrom("idempotency_records")
        .where("user_id", "=", scope.userId)
        .where("key", "=", scope.key)
        .where("operation_id", "=", operationId)
        .execute();
      throw error;
    }
    await store(error.status, error.toJSON(), error.headers);
    throw error;
  }
  await store(200, result, {});
  return result;
}
