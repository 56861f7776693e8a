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
import { sql, type Kysely, type UpdateQueryBuilder, type UpdateResult } from "kysely";
import { preparedAs } from "../../db/prepared-statements";
import type { Database, JournalStep } from "../../db/schema";
import {
  param,
  statement,
  type AcquireOptions,
  type LeaseHandle,
  type Param,
  type ParamValues,
  type StatementRecorder,
} from "@lease-lock-lab/lease";
import { identityActionLease, primaryChange } from "./users";

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

const userId = param<string>("userId");
const operationId = param<string>("operationId");

/**
 * The intent, as a statement for the lease's acquire: it reads the acquired user row (`acquired`). Its calls
 * may land until `inFlightSeconds` past the lease's expiry (`followsLease`) or past now (a holder without a
 * deadline inside its lease, whose calls are bounded by a timeout of their own). `toIdentityId` null: the
 * user's current primary (a settling operation, which switches nothing itself).
 */
const intentBound =
  (followsLease: boolean): StatementRecorder =>
  () => sql`
    INSERT INTO switch_journal (user_id, operation_id, fence, from_identity_id, to_identity_id, step, in_flight_until)
    SELECT id, ${operationId}::uuid, lease_lock_fence, primary_identity_id,
           coalesce(${param("toIdentityId")}::text, primary_identity_id), 'acquired',
           ${followsLease ? sql`lease_lock_until` : sql`now()`} + make_interval(secs => ${param("inFlightSeconds")})
      FROM acquired
    RETURNING id`;

const intent = { followsLease: intentBound(true), fromNow: intentBound(false) };

/**
 * For every statement that moves the lease's expiry (it reads `extended`): the running operation's calls
 * may land until the provider's limit past the new expiry. Not once its calls are behind it, nor after it ended.
 */
const boundFollowsLease: StatementRecorder = () => sql`
  UPDATE switch_journal
     SET in_flight_until = (SELECT until FROM extended) + make_interval(secs => ${param("applyLimitSeconds")})
   WHERE user_id = ${userId} AND operation_id = ${operationId}::uuid AND step NOT IN ('done', 'resolved')
     AND ended_with IS NULL AND in_flight_until IS NOT NULL AND EXISTS (SELECT 1 FROM extended)`;

/** What a later holder must reconcile: the user's entries not done, as the acquiring statement reads them. */
const leftoversRead: StatementRecorder = () =>
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

/** One operation, as the journal records it with its lease's acquisition. */
export interface RecordedOperation {
  userId: string;
  operationId: string;
  targetIdentityId: string | null;
  /** The provider's limit: a request it has not applied this long after it arrived is never applied. */
  applyLimitMs: number;
}

/**
 * What the journal sends with the lease's acquisition and extensions: its statements, the same objects every
 * time (so that the lease compiles them once), and one operation's values for them.
 */
export interface JournalRecording {
  statements: Required<Pick<AcquireOptions, "intent" | "also" | "onExtend">>;
  values(operation: RecordedOperation): ParamValues;
}

/**
 * The product's: the intent's calls, and every extension's, may land until the provider's limit past the
 * lease's expiry; the acquisition reads what earlier holders left (`also.leftovers`).
 */
export const leaseBoundRecording: JournalRecording = {
  statements: { intent: intent.followsLease, also: { leftovers: leftoversRead }, onExtend: boundFollowsLease },
  values: (operation) => ({
    userId: operation.userId,
    operationId: operation.operationId,
    toIdentityId: operation.targetIdentityId,
    inFlightSeconds: operation.applyLimitMs / 1000,
    applyLimitSeconds: operation.applyLimitMs / 1000,
  }),
};

/** A holder whose calls are bounded by a timeout of its own (`timeoutMs`), not by its lease. */
export const timeoutBoundRecording = (timeoutMs: number): JournalRecording => ({
  statements: { ...leaseBoundRecording.statements, intent: intent.fromNow },
  values: (operation) => ({
    ...leaseBoundRecording.values(operation),
    inFlightSeconds: (timeoutMs + operation.applyLimitMs) / 1000,
  }),
});

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

/** The lease's owner, as the journal's owner-checked statements name it: the user (its row) and the token. */
const owner = { rowId: userId, token: param<string>("token") };
const ownerValues = (lease: UserLease) => ({ userId: String(lease.rowId), token: lease.token });
const entryId = param<string>("entryId");

/**
 * Sent at every step of every switch, the same text each time: written once (compiled at its first run) and
 * named (a prepared statement per connection). The entry's step, only while the writer's lease is its own and
 * unexpired: an entry a later holder has settled is never reopened by an operation that lost its lease. Once the
 * provider calls are behind (`linked` and after), none of them can land any more.
 */
const advanceStatement = statement<Database, { id: string }, ParamValues>(
  () => sql<{ id: string }>`${preparedAs("journal_advance")}
    UPDATE switch_journal
       SET step = ${param("step")}, updated_at = now(),
           from_identity_id = coalesce(${param("fromIdentityId")}::text, from_identity_id),
           in_flight_until = CASE WHEN ${param("callsDone")}::boolean THEN NULL ELSE in_flight_until END
     WHERE id = ${entryId} AND step <> 'resolved' AND ${identityActionLease.heldCondition(owner)}
    RETURNING id`,
);

/** Records the step reached (see `advanceStatement`); whether it was written: the ownership check before the next step. */
export async function advance(
  db: Kysely<Database>,
  id: string,
  lease: UserLease,
  step: JournalStep,
  fromIdentityId?: string,
): Promise<boolean> {
  const callsDone = step === "linked" || step === "done";
  const values = { ...ownerValues(lease), entryId: id, step, fromIdentityId: fromIdentityId ?? null, callsDone };
  return (await advanceStatement.execute(db, values)).rows.length === 1;
}

/** What the last write did: saved the new primary (and recorded the entry done), and released the lease. */
export interface Finished {
  saved: boolean;
  released: boolean;
}

/**
 * The entry recorded `done` in the same statement as `write`, an owner-checked write of the user row, and
 * only if that applied.
 */
const doneWithQuery = (
  db: Kysely<Database>,
  id: string | Param<string>,
  write: UpdateQueryBuilder<Database, "users", "users", UpdateResult>,
) =>
  db
    .with("written", () => write.returning("id"))
    .updateTable("switch_journal")
    .set({ step: "done", updated_at: sql`now()`, in_flight_until: sql`NULL` })
    .where("id", "=", id)
    .where("step", "<>", "resolved")
    .where(({ exists, selectFrom }) => exists(selectFrom("written").select("id")));

/** `doneWithQuery` for a write of the caller's, compiled at each call: whether it applied. */
export async function doneWith(
  db: Kysely<Database>,
  id: string,
  write: UpdateQueryBuilder<Database, "users", "users", UpdateResult>,
): Promise<boolean> {
  return (await doneWithQuery(db, id, write).executeTakeFirst()).numUpdatedRows === 1n;
}

/**
 * The switch's last write, named as the acquire is: saves the user's new primary, releases the lease and records
 * the entry `done`, in one statement (one durable commit instead of three). The save and the release are the
 * lease's owner-checked UPDATE, and the journal is written only if they were: a holder paused past its lease
 * after its last check changes nothing.
 */
const saveAndFinishStatement = statement<Database, unknown, ParamValues>(
  (db) =>
    sql`${preparedAs("journal_done")} ${doneWithQuery(
      db,
      entryId,
      identityActionLease.releasing(db, owner, primaryChange(param("primaryIdentityId"))),
    )}`,
);

/** The end of an operation that changed nothing: the entry `done` and the lease released, in one statement. */
const finishAndReleaseStatement = statement<Database, unknown, ParamValues>(
  (db) =>
    sql`${preparedAs("journal_done")} ${doneWithQuery(db, entryId, identityActionLease.releasing(db, owner, {}))}`,
);

/** `saveAndFinishStatement`: whether it saved (and so released). */
export async function saveAndFinish(
  db: Kysely<Database>,
  id: string,
  lease: UserLease,
  primaryIdentityId: string,
): Promise<Finished> {
  const finished = await saveAndFinishStatement.execute(db, { ...ownerValues(lease), entryId: id, primaryIdentityId });
  const saved = finished.numAffectedRows === 1n;
  return { saved, released: saved };
}

/**
 * The end of an operation that changed nothing (the identity was already primary, or it only settled what
 * others left), see `finishAndReleaseStatement`. Whether it released.
 */
export const finishAndRelease = async (db: Kysely<Database>, id: string, lease: UserLease): Promise<boolean> =>
  (await finishAndReleaseStatement.execute(db, { ...ownerValues(lease), entryId: id })).numAffectedRows === 1n;

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
  /** Sent with the acquisition (the intent, the read of what earlier holders left) and every extension. */
  recording: JournalRecording;
  /** The entries the acquisition's read (`also.leftovers`) returned. */
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
  recording: leaseBoundRecording,
  leftoversFrom,
  advance,
  saveAndFinish,
  finishAndRelease,
  savePrimary: saveRecoveredPrimary,
  endUnfinished,
  discard,
  resolve,
};
