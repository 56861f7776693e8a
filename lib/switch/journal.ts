/**
 * The journal of lease-guarded switches: the intent (user, fence, from, to) is written by the very
 * statement that acquires the lease, and the step reached is advanced after each provider call in small
 * independent writes, each carrying the lease's condition. An entry not `done` is what a later holder of
 * the lease must reconcile. Each entry also says until when a provider write of its operation may still
 * land (`in_flight_until`): no later holder may trust what it reads at the provider before then, unless a
 * fenced read shuts old writes out.
 *
 * That bound follows the lease. A holder sends no call once its deadline, which sits inside the lease,
 * has fired, and the provider drops what it has not applied `applyLimitMs` after it arrived: so while the
 * operation runs, its calls can land no later than the lease's current expiry plus that limit. The
 * acquiring statement writes it, every statement that moves the expiry moves it too (atomically, in the
 * same statement), a crash leaves the last one, and an operation that ends narrows it.
 */
import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Database, JournalStep } from "../../db/schema";
import type { LeaseHandle } from "../lease";
import { primaryChange, savePrimary } from "./users";

/** The user's lease, as the journal's writes check it. */
type UserLease = LeaseHandle<Database, "users">;

export interface JournalEntry {
  id: string;
  userId: string;
  operationId: string;
  fence: bigint;
  fromIdentityId: string;
  toIdentityId: string;
  step: JournalStep;
  endedWith: string | null;
  /** How long (database clock, when read) a provider write of this operation may still land; 0: none can. */
  inFlightForMs: number;
  inFlightUntil: Date | null;
}

/**
 * The intent, as a statement for the lease's acquire: it reads the acquired user row (`acquired`). Its
 * calls may land until `boundMs` past the lease's expiry (`followsLease`) or past now (a holder without
 * a deadline inside its lease: the textbook's, whose calls are bounded by their own timeout only).
 */
export function intentRecorder(
  operationId: string,
  /** null: the user's current primary (a settling operation, which switches nothing itself). */
  toIdentityId: string | null,
  bound: { boundMs: number; followsLease: boolean },
): () => RawBuilder<unknown> {
  const from = bound.followsLease ? sql`lease_lock_until` : sql`now()`;
  return () => sql`
    INSERT INTO switch_journal (user_id, operation_id, fence, from_identity_id, to_identity_id, step, in_flight_until)
    SELECT id, ${operationId}::uuid, lease_lock_fence, primary_identity_id, coalesce(${toIdentityId}, primary_identity_id), 'acquired',
           ${from} + make_interval(secs => ${bound.boundMs / 1000})
      FROM acquired
    RETURNING id`;
}

/**
 * For every statement that moves the lease's expiry (it reads `extended`): the running operation's calls
 * may land until `applyLimitMs` past the new expiry. Not once its calls are behind it, nor after it ended.
 */
export function boundFollowsLease(
  userId: string,
  operationId: string,
  applyLimitMs: number,
): () => RawBuilder<unknown> {
  return () => sql`
    UPDATE switch_journal SET in_flight_until = (SELECT until FROM extended) + make_interval(secs => ${applyLimitMs / 1000})
     WHERE user_id = ${userId} AND operation_id = ${operationId}::uuid AND step NOT IN ('done', 'resolved')
       AND ended_with IS NULL AND in_flight_until IS NOT NULL AND EXISTS (SELECT 1 FROM extended)`;
}

export async function openEntries(db: Kysely<Database>, userId: string, exceptId: string): Promise<JournalEntry[]> {
  const rows = await db
    .selectFrom("switch_journal")
    .selectAll()
    .select(
      sql<number>`greatest(0, coalesce(extract(epoch FROM in_flight_until - clock_timestamp()) * 1000, 0))::float8`.as(
        "in_flight_ms",
      ),
    )
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
    inFlightForMs: row.in_flight_ms,
    inFlightUntil: row.in_flight_until,
  }));
}

/**
 * Records the step reached, only while the writer's lease is its own and unexpired (the condition is the
 * statement's): an entry a later holder has settled is never reopened by an operation that lost its
 * lease. Once the provider calls are behind (`linked` and after), none of them can land any more.
 * Answers whether it was written: the same round trip is the ownership check before the next step.
 */
export async function advance(
  db: Kysely<Database>,
  id: string,
  lease: UserLease,
  step: JournalStep,
  fromIdentityId?: string,
): Promise<boolean> {
  const callsDone = step === "linked" || step === "done";
  const { rows } = await sql<{ id: string }>`
    UPDATE switch_journal
       SET step = ${step}, updated_at = now(), from_identity_id = coalesce(${fromIdentityId ?? null}, from_identity_id),
           in_flight_until = CASE WHEN ${callsDone}::boolean THEN NULL ELSE in_flight_until END
     WHERE id = ${id} AND step <> 'resolved' AND ${lease.heldCondition()}
    RETURNING id`.execute(db);
  return rows.length === 1;
}

/**
 * The switch's last write: saves the user's new primary and records the entry `done`, in one statement
 * (one durable commit instead of two). The save is the lease's owner-checked UPDATE, and the journal is
 * written only if the save was: a holder paused past its lease after its last check changes nothing.
 * Answers whether it saved.
 */
export async function saveAndFinish(
  db: Kysely<Database>,
  id: string,
  lease: UserLease,
  primaryIdentityId: string,
): Promise<boolean> {
  const { numUpdatedRows } = await db
    .with("saved", () => lease.updating(primaryChange(primaryIdentityId)).returning("id"))
    .updateTable("switch_journal")
    .set({ step: "done", updated_at: sql`now()`, in_flight_until: sql`NULL` })
    .where("id", "=", id)
    .where("step", "<>", "resolved")
    .where(({ exists, selectFrom }) => exists(selectFrom("saved").select("id")))
    .executeTakeFirst();
  return numUpdatedRows === 1n;
}

/**
 * The lab's fault `unfencedSave`: the same last write with the save made unconditionally, as a save that
 * trusts the checks before it does. A holder paused after its last check then overwrites a later holder.
 */
export async function saveUnfencedAndFinish(
  db: Kysely<Database>,
  id: string,
  userId: string,
  primaryIdentityId: string,
): Promise<boolean> {
  await savePrimary(db, userId, primaryIdentityId);
  await db
    .updateTable("switch_journal")
    .set({ step: "done", updated_at: sql`now()`, in_flight_until: sql`NULL` })
    .where("id", "=", id)
    .where("step", "<>", "resolved")
    .execute();
  return true;
}

/**
 * Notes how an unfinished operation ended (its error), leaving the step for the next holder. When a call's
 * answer was lost, it may still land for `outcomeUnknownForMs`; otherwise none of its calls can.
 */
export async function endUnfinished(
  db: Kysely<Database>,
  id: string,
  endedWith: string,
  outcomeUnknownForMs: number | null,
): Promise<void> {
  const inFlightUntil =
    outcomeUnknownForMs === null
      ? sql`NULL`
      : sql`clock_timestamp() + make_interval(secs => ${outcomeUnknownForMs / 1000})`;
  await sql`
    UPDATE switch_journal
       SET ended_with = ${endedWith}, updated_at = now(), in_flight_until = ${inFlightUntil}
     WHERE id = ${id} AND step NOT IN ('done', 'resolved')`.execute(db);
}

/** An operation that made no provider write leaves nothing to settle: its entry goes. */
export async function discard(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom("switch_journal").where("id", "=", id).execute();
}

export async function resolve(db: Kysely<Database>, id: string, resolvedBy: string): Promise<void> {
  await db
    .updateTable("switch_journal")
    .set({ step: "resolved", resolved_by: resolvedBy, updated_at: new Date() })
    .where("id", "=", id)
    .execute();
}
