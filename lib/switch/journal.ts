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
import { sql, type Kysely, type RawBuilder, type UpdateQueryBuilder, type UpdateResult } from "kysely";
import { preparedAs } from "../../db/prepared-statements";
import type { Database, JournalStep } from "../../db/schema";
import type { LeaseHandle, StatementRecorder } from "@lease-lock-lab/lease";
import { primaryChange } from "./users";

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
 * a deadline inside its lease, whose calls are bounded by a timeout of their own).
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

/** What a later holder must reconcile: the user's entries not done, as the acquiring statement reads them. */
export const leftoversRead =
  (userId: string): StatementRecorder =>
  () =>
    // FOR SHARE: an entry its holder closed while this acquisition waited for the row is read as closed (the
    // lock follows it to its newest version, as the acquisition's own UPDATE does), not as the statement's
    // older snapshot has it. The new entry itself is not in that snapshot.
    sql`SELECT id::text AS id, user_id, operation_id, fence::text AS fence, from_identity_id, to_identity_id, step,
               ended_with, in_flight_until,
               greatest(0, coalesce(extract(epoch FROM in_flight_until - clock_timestamp()) * 1000, 0))::float8
                 AS in_flight_ms
          FROM switch_journal
         WHERE user_id = ${userId} AND step NOT IN ('done', 'resolved') AND EXISTS (SELECT 1 FROM acquired)
         ORDER BY id
           FOR SHARE`;

/** The entries `leftoversRead` returned (JSON objects: its times as strings). */
export const leftoversFrom = (rows: Record<string, unknown>[]): JournalEntry[] =>
  rows.map((row) => ({
    id: String(row.id),
    userId: String(row.user_id),
    operationId: String(row.operation_id),
    fence: BigInt(String(row.fence)),
    fromIdentityId: String(row.from_identity_id),
    toIdentityId: String(row.to_identity_id),
    step: row.step as JournalStep,
    endedWith: (row.ended_with as string | null) ?? null,
    inFlightForMs: Number(row.in_flight_ms),
    inFlightUntil: row.in_flight_until === null ? null : new Date(String(row.in_flight_until)),
  }));

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
  // Named: sent at every step of every switch, the same text each time.
  const { rows } = await sql<{ id: string }>`${preparedAs("journal_advance")}
    UPDATE switch_journal
       SET step = ${step}, updated_at = now(), from_identity_id = coalesce(${fromIdentityId ?? null}, from_identity_id),
           in_flight_until = CASE WHEN ${callsDone}::boolean THEN NULL ELSE in_flight_until END
     WHERE id = ${id} AND step <> 'resolved' AND ${lease.heldCondition()}
    RETURNING id`.execute(db);
  return rows.length === 1;
}

/** What the last write did: saved the new primary (and recorded the entry done), and released the lease. */
export interface Finished {
  saved: boolean;
  released: boolean;
}

/**
 * The entry recorded `done` in the same statement as `write`, an owner-checked write of the user row, and
 * only if that applied. Whether it did.
 */
export async function doneWith(
  db: Kysely<Database>,
  id: string,
  write: UpdateQueryBuilder<Database, "users", "users", UpdateResult>,
): Promise<boolean> {
  const done = db
    .with("written", () => write.returning("id"))
    .updateTable("switch_journal")
    .set({ step: "done", updated_at: sql`now()`, in_flight_until: sql`NULL` })
    .where("id", "=", id)
    .where("step", "<>", "resolved")
    .where(({ exists, selectFrom }) => exists(selectFrom("written").select("id")));
  // Named, as the acquire is: every switch's last write, one text per shape of `write`.
  const { numAffectedRows } = await sql`${preparedAs("journal_done")} ${done}`.execute(db);
  return numAffectedRows === 1n;
}

/**
 * The switch's last write: saves the user's new primary, releases the lease and records the entry `done`, in
 * one statement (one durable commit instead of three). The save and the release are the lease's owner-checked
 * UPDATE, and the journal is written only if they were: a holder paused past its lease after its last check
 * changes nothing.
 */
export async function saveAndFinish(
  db: Kysely<Database>,
  id: string,
  lease: UserLease,
  primaryIdentityId: string,
): Promise<Finished> {
  const saved = await doneWith(db, id, lease.releasing(primaryChange(primaryIdentityId)));
  return { saved, released: saved };
}

/**
 * The end of an operation that changed nothing (the identity was already primary, or it only settled what
 * others left): the entry `done` and the lease released, in one statement. Whether it released.
 */
export const finishAndRelease = (db: Kysely<Database>, id: string, lease: UserLease): Promise<boolean> =>
  doneWith(db, id, lease.releasing({}));

/** Recovery's save of the primary the provider has: the lease's owner-checked write. Answers whether it saved. */
export async function saveRecoveredPrimary(
  _db: Kysely<Database>,
  lease: UserLease,
  primaryIdentityId: string,
): Promise<boolean> {
  return lease.update(primaryChange(primaryIdentityId));
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

/**
 * The journal's statements as the lease guard sends them, behind one interface, so that they can be wrapped
 * without the guard knowing.
 */
export interface SwitchJournal {
  /** The intent, sent inside the acquiring statement: its calls may land until the limit past the lease. */
  intent(operationId: string, toIdentityId: string | null, applyLimitMs: number): StatementRecorder;
  boundFollowsLease: typeof boundFollowsLease;
  /** The read, sent with the acquisition, of what earlier holders left to reconcile; and its rows as entries. */
  leftoversRead: typeof leftoversRead;
  leftoversFrom: typeof leftoversFrom;
  advance: typeof advance;
  saveAndFinish: typeof saveAndFinish;
  finishAndRelease: typeof finishAndRelease;
  savePrimary: typeof saveRecoveredPrimary;
  endUnfinished: typeof endUnfinished;
  discard: typeof discard;
  resolve: typeof resolve;
}

export const switchJournal: SwitchJournal = {
  intent: (operationId, toIdentityId, applyLimitMs) =>
    intentRecorder(operationId, toIdentityId, { boundMs: applyLimitMs, followsLease: true }),
  boundFollowsLease,
  leftoversRead,
  leftoversFrom,
  advance,
  saveAndFinish,
  finishAndRelease,
  savePrimary: saveRecoveredPrimary,
  endUnfinished,
  discard,
  resolve,
};
