/**
 * The journal of lease-guarded switches: the intent (user, fence, from, to) is written by the very
 * statement that acquires the lease, and the step reached is advanced after each provider call in small
 * independent writes. An entry not `done` is what a later holder of the lease must reconcile.
 */
import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Database, JournalStep } from "../../db/schema";

export interface JournalEntry {
  id: string;
  userId: string;
  operationId: string;
  fence: bigint;
  fromIdentityId: string;
  toIdentityId: string;
  step: JournalStep;
  endedWith: string | null;
}

/** The intent, as a statement for `LeaseLock.acquire`: it reads the acquired user row (`acquired`). */
export function intentRecorder(operationId: string, toIdentityId: string): () => RawBuilder<unknown> {
  return () => sql`
    INSERT INTO switch_journal (user_id, operation_id, fence, from_identity_id, to_identity_id, step)
    SELECT id, ${operationId}::uuid, lease_lock_fence, primary_identity_id, ${toIdentityId}, 'acquired' FROM acquired
    RETURNING id`;
}

export async function openEntries(db: Kysely<Database>, userId: string, exceptId: string): Promise<JournalEntry[]> {
  const rows = await db
    .selectFrom("switch_journal")
    .selectAll()
    .where("user_id", "=", userId)
    .where("id", "!=", exceptId)
    .where("step", "not in", ["done", "resolved"])
    .orderBy("id")
    .execute();
  return rows.map((row) => ({
    id: row.id,
    userId: row.user_id,
    operationId: row.operation_id,
    fence: BigInt(row.fence),
    fromIdentityId: row.from_identity_id,
    toIdentityId: row.to_identity_id,
    step: row.step,
    endedWith: row.ended_with,
  }));
}

export async function advance(
  db: Kysely<Database>,
  id: string,
  step: JournalStep,
  fromIdentityId?: string,
): Promise<void> {
  await db
    .updateTable("switch_journal")
    .set({ step, updated_at: new Date(), ...(fromIdentityId ? { from_identity_id: fromIdentityId } : {}) })
    .where("id", "=", id)
    .execute();
}

/** Notes how an unfinished operation ended (its error), leaving the step for the next holder. */
export async function endUnfinished(db: Kysely<Database>, id: string, endedWith: string): Promise<void> {
  await db
    .updateTable("switch_journal")
    .set({ ended_with: endedWith, updated_at: new Date() })
    .where("id", "=", id)
    .where("step", "!=", "done")
    .execute();
}

export async function resolve(db: Kysely<Database>, id: string, resolvedBy: string): Promise<void> {
  await db
    .updateTable("switch_journal")
    .set({ step: "resolved", resolved_by: resolvedBy, updated_at: new Date() })
    .where("id", "=", id)
    .execute();
}
