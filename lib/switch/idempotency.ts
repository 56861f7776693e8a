/**
 * Idempotency keys: the first request with a key runs and its answer is stored; a repeat with the same
 * key (same user) gets that answer without running again, a problem replayed as the same problem; the
 * same key with another body is a 422. A claim whose request died without answering goes stale after
 * `staleAfterMs` and may be run again.
 */
import { createHash, randomUUID } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { z } from "zod";
import type { Database } from "../../db/schema";
import { IdempotencyKeyReused, OperationInProgress, Problem, ReplayedProblem } from "../core/problems";

export const idempotencyKeySchema = z.string().min(1).max(255);

interface Scope {
  userId: string;
  key: string;
  /** What makes two requests "the same": hashed and compared. */
  request: unknown;
  staleAfterMs: number;
}

export async function withIdempotencyKey<T>(
  db: Kysely<Database>,
  scope: Scope,
  run: (operationId: string) => Promise<T>,
): Promise<T> {
  const requestHash = createHash("sha256").update(JSON.stringify(scope.request)).digest("hex");
  const operationId = randomUUID();
  const claimed = await db
    .insertInto("idempotency_records")
    .values({
      user_id: scope.userId,
      key: scope.key,
      request_hash: requestHash,
      operation_id: operationId,
      status: null,
      body: null,
      headers: null,
    })
    .onConflict((conflict) => conflict.columns(["user_id", "key"]).doNothing())
    .returning("operation_id")
    .executeTakeFirst();
  if (claimed) return runAndStore(db, scope, operationId, run);

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
    .executeTakeFirstOrThrow();
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
  throw new OperationInProgress(null, 1_000);
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
    // Not started (another operation held the user) or failed unexpectedly: nothing to remember.
    if (!(error instanceof Problem) || error instanceof OperationInProgress) {
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
