/**
 * The journal of lease-guarded switches: the intent (user, fence, from, to) is written by the very
 * statement that acquires the lease, and the step reached is advanced after each provider call in small
 * independent writes. An entry not `done` is what a later holder of the lease must reconcile. Each entry
 * also says until when a provider write of its operation may still land (`in_flight_until`): no later
 * holder may trust what it reads at the provider before then, unless a fenced read shuts old writes out.
 */
import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Database, JournalStep } from "../../db/schema";
import { userSave, type User } from "./users";

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
 * calls may land until `callsMayLandForMs` from now: the longest its lease can be held, plus the provider's
 * limit. A crash leaves that bound; an operation that ends narrows it.
 */
export function intentRecorder(
  operationId: string,
  /** null: the user's current primary (a settling operation, which switches nothing itself). */
  toIdentityId: string | null,
  callsMayLandForMs: number,
): () => RawBuilder<unknown> {
  return () => sql`
    INSERT INTO switch_journal (user_id, operation_id, fence, from_identity_id, to_identity_id, step, in_flight_until)
    SELECT id, ${operationId}::uuid, lease_lock_fence, primary_identity_id, coalesce(${toIdentityId}, primary_identity_id), 'acquired',
           now() + make_interval(secs => ${callsMayLandForMs / 1000})
      FROM acquired
    RETURNING id`;
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
 * Records the step reached, only while the writer still holds the user's lease (its token): an entry a
 * later holder has settled is never reopened by an operation that lost its lease. Once the provider calls
 * are behind (`linked` and after), none of them can land any more. Answers whether the lease is still the
 * writer's and unexpired: the same round trip serves as the ownership check before the next step.
 */
export async function advance(
  db: Kysely<Database>,
  id: string,
  leaseToken: string,
  step: JournalStep,
  fromIdentityId?: string,
): Promise<boolean> {
  const callsDone = step === "linked" || step === "done";
  const { rows } = await sql<{ unexpired: boolean }>`
    UPDATE switch_journal
       SET step = ${step}, updated_at = now(), from_identity_id = coalesce(${fromIdentityId ?? null}, from_identity_id),
           in_flight_until = CASE WHEN ${callsDone}::boolean THEN NULL ELSE in_flight_until END
      FROM users
     WHERE switch_journal.id = ${id} AND switch_journal.step <> 'resolved'
       AND users.id = switch_journal.user_id AND users.identity_action_lock_token = ${leaseToken}
    RETURNING users.identity_action_locked_until > now() AS unexpired`.execute(db);
  return rows[0]?.unexpired ?? false;
}

/**
 * The switch's last write: saves the user's new primary and records the entry `done`, in one statement
 * (one durable commit instead of two). Like `advance`, the journal is written only by the lease's owner.
 */
export async function saveAndFinish(db: Kysely<Database>, id: string, leaseToken: string, user: User): Promise<void> {
  await db
    .with("saved", (creator) => userSave(creator, user).returning("id"))
    .updateTable("switch_journal")
    .from("users")
    .set({ step: "done", updated_at: sql`now()`, in_flight_until: sql`NULL` })
    .where("switch_journal.id", "=", id)
    .where("switch_journal.step", "<>", "resolved")
    .whereRef("users.id", "=", "switch_journal.user_id")
    .where("users.identity_action_lock_token", "=", leaseToken)
    .execute();
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
  await sql`
    UPDATE switch_journal
       SET ended_with = ${endedWith}, updated_at = now(),
           in_flight_until = ${outcomeUnknownForMs === null ? sql`NULL` : sql`clock_timestamp() + make_interval(secs => ${outcomeUnknownForMs / 1000})`}
     WHERE id = ${id} AND step NOT IN ('done', 'resolved')`.execute(db);
}

export async function resolve(db: Kysely<Database>, id: string, resolvedBy: string): Promise<void> {
  await db
    .updateTable("switch_journal")
    .set({ step: "resolved", resolved_by: resolvedBy, updated_at: new Date() })
    .where("id", "=", id)
    .execute();
}
