/**
 * A lease lock stored as data on the protected row: three nullable columns (when it was taken, until when
 * it holds, the holder's token) and a fence that grows at every acquisition, qualified by the generation of
 * the primary that issued it (grows at every promotion; optionally stored). Each statement here is one
 * autocommit statement: no transaction and no connection is held between acquire and release. Every
 * moment is the database's (`now()`, `clock_timestamp()`); Node only ever receives durations.
 */
import {
  sql,
  type Kysely,
  type RawBuilder,
  type Selectable,
  type UpdateObject,
  type UpdateQueryBuilder,
  type UpdateResult,
} from "kysely";
import { leaseHolders, type HoldersPage, type HoldersQuery } from "./holders.ts";
import {
  leaseHandle,
  leaseParams,
  leaseRefs,
  millisecondsLeft,
  ownerChecks,
  secondsInterval,
  statementKeys,
  type LeaseRefs,
} from "./lease-handle.ts";
import { none, type Param, type ParamValues } from "./statements.ts";

/** The columns of `Row` whose selected type is assignable to `Value`: the lock's columns are checked. */
type ColumnsOfType<Row, Value> = {
  [K in keyof Selectable<Row> & string]: Selectable<Row>[K] extends Value ? K : never;
}[keyof Selectable<Row> & string];

/** The id of a protected row, as the caller has it (a text or a numeric key). */
export type RowId = string | number;

/** Where a lease lives: a table of `DB` and its columns, each checked against the type it must have. */
export interface LeaseColumns<DB, TB extends keyof DB & string> {
  table: TB;
  id: ColumnsOfType<DB[TB], RowId>;
  /** When the current lease was taken; written only by acquire. */
  lockedAt: ColumnsOfType<DB[TB], Date | null>;
  /** Until when it holds, as its holder chose at acquisition (and renewals extended). */
  lockedUntil: ColumnsOfType<DB[TB], Date | null>;
  token: ColumnsOfType<DB[TB], string | null>;
  fence: ColumnsOfType<DB[TB], string | number | bigint>;
  /** Optional: the generation the current lease was taken in (see `primaryGeneration`), written by acquire. */
  generation?: ColumnsOfType<DB[TB], string | number | bigint>;
}

/**
 * The primary's generation: the PostgreSQL timeline ID of its WAL insert position. A promoted standby
 * starts a new timeline ID, greater than every one before it, before it takes its first write, and needs no
 * write of its own to say so (measured: `npm run measure:generation`, docs/failover.md). The checkpoint's
 * timeline ID (`pg_control_checkpoint()`) lags until the end-of-recovery checkpoint, and a row bumped by a callback
 * (Patroni's on_role_change) comes after the first writes, or not at all.
 */
export const primaryGeneration: RawBuilder<string> = sql<string>`
  ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint`;

export interface LeaseLockOptions {
  /**
   * Sends each statement as a named prepared statement `<name>_<statement>`: it begins with the comment
   * `/* prepared: <name>_<statement> *\/`, which a pool that honours it (this app's
   * db/prepared-statements.ts) turns into a named statement, parsed and planned once per connection.
   * Without such a pool, or behind a pooler that cannot keep prepared statements, the comment is inert.
   */
  preparedName?: string;
}

/**
 * A statement run inside another statement of the lease (so it is atomic with it). At acquisition it
 * reads the CTE `acquired` (the row's columns plus `lease_lock_fence`, `lease_lock_generation` and
 * `lease_lock_until`); at a renewal or a hold, the CTE `extended` (`until`: the new expiry).
 * E.g. `INSERT … SELECT … FROM acquired RETURNING id`.
 *
 * The lease's statements are compiled once per database and shape: the same recorders (and `requires`, and
 * `also`, the same objects) give the same SQL, which is built at their first use and then only sent again with
 * new values. So a recorder is called once per shape: what changes from call to call goes in as
 * `param(name)`, its value in the options' `values` (a recorder made anew at each call, its values written
 * in, still works: it is compiled at each call).
 */
export type StatementRecorder = () => RawBuilder<unknown>;

export interface AcquireOptions {
  ttlMs: number;
  /** The most a renewal may extend the lease to, counted from `lockedAt`; null: no cap. */
  maxHoldMs?: number | null;
  /** Recorded by the acquiring statement; its first row's `id` comes back as `intentId`. */
  intent?: StatementRecorder;
  /** Recorded by every statement that moves the expiry (a renewal, a hold), e.g. a bound kept elsewhere. */
  onExtend?: StatementRecorder;
  /**
   * What else the acquisition requires, checked in its own statement (e.g. the caller's session, a related
   * row): while it is false, nobody acquires, and the answer is `{ acquired: false, reason: "unmet" }`.
   */
  requires?: RawBuilder<boolean>;
  /**
   * Reads sent in the same statement, each a query that may read `acquired`; the winner gets each one's
   * rows as JSON objects under its name (`also`). A read of rows an earlier holder may have just written
   * should lock them (`FOR SHARE`), so that it sees their newest committed version, as the holder's does.
   */
  also?: Record<string, StatementRecorder>;
  /** The values of the `param(name)`s in `intent`, `onExtend`, `requires` and `also`, by name. */
  values?: ParamValues;
}

/** A held lease. Its methods are closures: they may be passed around without their object. */
export interface LeaseHandle<DB = unknown, TB extends keyof DB & string = keyof DB & string> {
  readonly rowId: RowId;
  readonly token: string;
  /** Grows by one at every acquisition of this row's lease: a fencing token… */
  readonly fence: bigint;
  /**
   * …within the generation of the primary that took it (`primaryGeneration`): a lease taken after a
   * promotion has a greater one. (generation, fence) compared in that order never repeats across a
   * promotion that lost acquisitions; the fence alone may.
   */
  readonly generation: bigint;
  /** When the lease expires, as the database last said (renewals move it). */
  readonly expiresAt: Date;
  /** How long it had left when the database last answered… */
  readonly remainingMs: number;
  /** …and when that was, on this process's monotonic clock (`performance.now()`). */
  readonly answeredAt: number;
  /** Extends the lease to now + TTL (never past the hold cap); false when it is no longer mine. */
  renew(): Promise<boolean>;
  /**
   * Keeps the lease at least until `untilMs` from now, past the hold cap; false when someone else has taken
   * it since. It also applies to a lease that expired untaken: nobody else can have acted under it.
   */
  holdFor(untilMs: number): Promise<boolean>;
  /** Whether it is still mine and unexpired. */
  holds(): Promise<boolean>;
  /** Clears it only if it is still mine; false when someone else holds it now (or nobody does). */
  release(): Promise<boolean>;
  /**
   * Writes `values` to the protected row only while the lease is mine and unexpired: the condition is in
   * the statement's own WHERE, so a holder paused after its last check still cannot write. True when it
   * applied. Never write the lock's own columns with it.
   */
  update(values: UpdateObject<DB, TB>): Promise<boolean>;
  /** The same owner-checked UPDATE as a query, to send along with another statement (a CTE). */
  updating(values: UpdateObject<DB, TB>): UpdateQueryBuilder<DB, TB, TB, UpdateResult>;
  /**
   * The work's last write and the release in one owner-checked UPDATE, as a query (see `LeaseSection.releaseWith`):
   * it writes `values` and clears the lease, or, when the lease is no longer mine, changes nothing.
   */
  releasing(values: UpdateObject<DB, TB>): UpdateQueryBuilder<DB, TB, TB, UpdateResult>;
  /** True while the lease is mine and unexpired, as a condition for any other statement's WHERE. */
  heldCondition(): RawBuilder<boolean>;
}

export type Acquisition<DB = unknown, TB extends keyof DB & string = keyof DB & string> =
  | {
      acquired: true;
      lease: LeaseHandle<DB, TB>;
      /** What the intent recorder returned (its first row's `id`). */
      intentId: string | null;
      /** The protected row as the acquisition left it, read by the same statement and typed as a select of it. */
      row: Selectable<DB[TB]>;
      /** What each of `also`'s reads returned, as JSON objects. */
      also: Record<string, Record<string, unknown>[]>;
    }
  | { acquired: false; reason: "held"; heldUntil: Date | null; remainingMs: number }
  /** The row is free, but what the acquisition `requires` is not so. */
  | { acquired: false; reason: "unmet" }
  | { acquired: false; reason: "not-found" };

/** The lease as the database sees it, for display and tests. */
export interface LeaseState {
  held: boolean;
  lockedAt: Date | null;
  expiresAt: Date | null;
  token: string | null;
  fence: bigint;
  /** The generation the last lease was taken in; null when the lease has no generation column. */
  generation: bigint | null;
  /** 0 when not held. */
  remainingMs: number;
}

/**
 * Who holds a lease, as an owner-checked statement names it: its row and its token, each a value (a handle is
 * one) or a `param`, for a statement of the caller's compiled once (see `statement`).
 */
export interface Owner {
  rowId: RowId | Param<RowId>;
  token: string | Param<string>;
}

export interface LeaseLock<DB, TB extends keyof DB & string = keyof DB & string> {
  /** The protected table's name (for telemetry and display). */
  readonly table: string;
  /**
   * The try-lock: it never waits for a holder. A lease held by another is refused at once with its expiry;
   * a concurrent acquirer's statement is waited for only while that one statement runs (its row lock).
   */
  acquire(db: Kysely<DB>, rowId: RowId, options: AcquireOptions): Promise<Acquisition<DB, TB>>;
  inspect(db: Kysely<DB>, rowId: RowId): Promise<LeaseState | null>;
  /** Who holds what: a page of the rows held now, by id (see `holders.ts`). */
  holders(db: Kysely<DB>, query?: HoldersQuery): Promise<HoldersPage>;
  /**
   * For statements of the caller's own, written once with the owner as `param`s (a handle's own `heldCondition`,
   * `updating` and `releasing` have its values written in): true while `owner` holds the lease and it has not
   * expired, as a condition for any statement's WHERE…
   */
  heldCondition(owner: Owner): RawBuilder<boolean>;
  /** …the owner-checked UPDATE of the protected row, as a query (see `LeaseHandle.updating`)… */
  updating(db: Kysely<DB>, owner: Owner, values: UpdateObject<DB, TB>): UpdateQueryBuilder<DB, TB, TB, UpdateResult>;
  /** …and the same UPDATE clearing the lease (see `LeaseHandle.releasing`). */
  releasing(db: Kysely<DB>, owner: Owner, values: UpdateObject<DB, TB>): UpdateQueryBuilder<DB, TB, TB, UpdateResult>;
}

/** The columns the acquiring statement adds to the row it returns; never the names of a table's own. */
interface AcquiredMeta {
  lease_lock_token: string | null;
  /** From the acquired row (its fence and expiry as the intent recorder reads them). */
  lease_lock_fence: string | number | null;
  /** The primary's generation, read by the acquiring statement itself. */
  lease_lock_generation: string | null;
  lease_lock_until: Date | null;
  lease_lock_held_until: Date | null;
  lease_lock_remaining_ms: number | null;
  /** The row is there but was not acquired: held, or (with `requires`) what it requires was unmet. */
  lease_lock_found: boolean;
  lease_lock_unmet: boolean;
  lease_lock_intent_id: string | null;
  lease_lock_also: Record<string, Record<string, unknown>[]> | null;
}

/**
 * The lease on `columns.table`. Example, a job queue's claim:
 *
 * @example
 * const jobLease = leaseLock<JobsDb, "jobs">({
 *   table: "jobs", id: "id", lockedAt: "claimed_at", lockedUntil: "claimed_until", token: "claim_token", fence: "claim_fence",
 * });
 * const taken = await jobLease.acquire(db, jobId, { ttlMs: 30_000 });
 * if (taken.acquired) {
 *   try {
 *     await sendTheInvoice(taken.row, { fence: taken.lease.fence });
 *     if (!(await taken.lease.update({ status: "sent" }))) throw new Error("lost the claim before saving");
 *   } finally {
 *     await taken.lease.release();
 *   }
 * }
 */
export function leaseLock<DB, TB extends keyof DB & string>(
  columns: LeaseColumns<DB, TB>,
  options: LeaseLockOptions = {},
): LeaseLock<DB, TB> {
  const refs = leaseRefs(columns, options);
  return {
    table: columns.table,
    async acquire(db, rowId, acquireOptions) {
      const { intent, requires, also: reads } = acquireOptions;
      const taken = await refs.statements.run(
        db,
        [statementKeys.acquire, intent ?? none, requires ?? none, reads ?? none],
        () => acquiringStatement(refs, acquireOptions),
        {
          ...acquireOptions.values,
          [leaseParams.rowId.name]: rowId,
          [leaseParams.ttlSeconds.name]: acquireOptions.ttlMs / 1000,
        },
      );
      const {
        lease_lock_token: tokenTaken,
        lease_lock_fence: fenceTaken,
        lease_lock_generation: generationTaken,
        lease_lock_until: until,
        lease_lock_held_until: heldUntil,
        lease_lock_remaining_ms: remainingMs,
        lease_lock_found: found,
        lease_lock_unmet: unmet,
        lease_lock_intent_id: intentId,
        lease_lock_also: also,
        ...row
      } = taken.rows[0]!;
      if (tokenTaken === null || fenceTaken === null || until === null) {
        if (!found) return { acquired: false, reason: "not-found" };
        return unmet
          ? { acquired: false, reason: "unmet" }
          : { acquired: false, reason: "held", heldUntil, remainingMs: remainingMs ?? 0 };
      }
      const taking = {
        token: tokenTaken,
        fence: BigInt(fenceTaken),
        generation: BigInt(generationTaken ?? 0),
        until,
        remainingMs: remainingMs ?? 0,
      };
      const lease = leaseHandle<DB, TB>(refs, db, rowId, taking, acquireOptions);
      return { acquired: true, lease, intentId, row: row as Selectable<DB[TB]>, also: also ?? {} };
    },
    inspect: (db, rowId) => inspectLease(refs, db, rowId),
    holders: (db, query) => leaseHolders(refs, db, query),
    ...ownerChecks<DB, TB>(refs),
  };
}

/**
 * One statement answers winner and losers alike. The UPDATE takes the row lock; a concurrent acquirer waits
 * for it, then re-checks the WHERE against the committed row and matches 0 rows. A loser then reads the
 * holder's expiry with FOR SHARE, which conflicts with the winner's UPDATE and so follows the row to its
 * newest committed version (a plain read, or FOR KEY SHARE, which does not conflict with a non-key UPDATE,
 * would return the statement's older snapshot: no expiry at all). Losers thus learn when to come back
 * without a second round trip. The winner gets the row as it left it, each column parsed as a query of it
 * would be, so the work need not read it again, and whatever `intent` and `also` sent with it.
 */
function acquiringStatement(
  { table, id, lockedAt, lockedUntil, token, fence, generation, named }: LeaseRefs,
  { intent, requires, also = {} }: AcquireOptions,
): RawBuilder<AcquiredMeta & Record<string, unknown>> {
  const rowId = leaseParams.rowId;
  const required = requires ?? sql<boolean>`true`;
  const reads = Object.entries(also);
  for (const [name] of reads) if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`also: "${name}" is no SQL name`);
  const takesGeneration = generation ? sql`, ${generation} = ${primaryGeneration}` : sql``;
  const withIntent = intent ? sql`, intent AS (${intent()})` : sql``;
  const withReads = sql.join(
    reads.map(([name, read]) => sql`, ${sql.id(name)} AS (${read()})`),
    sql``,
  );
  const readsJson = reads.length
    ? sql`json_build_object(${sql.join(
        reads.map(([name]) => sql`${sql.lit(name)}, (SELECT coalesce(json_agg(r), '[]'::json) FROM ${sql.id(name)} r)`),
      )})`
    : sql`NULL::json`;
  return sql<AcquiredMeta & Record<string, unknown>>`${named(intent ? "acquire_with_intent" : "acquire")}
    WITH acquired AS (
      UPDATE ${table}
         SET ${lockedAt} = now(), ${lockedUntil} = now() + ${secondsInterval(leaseParams.ttlSeconds)},
             ${token} = gen_random_uuid(), ${fence} = ${fence} + 1${takesGeneration}
       WHERE ${id} = ${rowId} AND (${lockedUntil} IS NULL OR ${lockedUntil} < now()) AND (${required})
      RETURNING *, ${fence} AS lease_lock_fence, ${primaryGeneration}::text AS lease_lock_generation,
                ${lockedUntil} AS lease_lock_until
    )${withIntent}${withReads},
    holder AS (
      SELECT ${lockedUntil} AS until FROM ${table}
       WHERE ${id} = ${rowId} AND NOT EXISTS (SELECT 1 FROM acquired) FOR SHARE
    )
    SELECT acquired.*, acquired.${token}::text AS lease_lock_token, holder.until AS lease_lock_held_until,
           ${millisecondsLeft(sql`coalesce(acquired.lease_lock_until, holder.until)`)} AS lease_lock_remaining_ms,
           EXISTS (SELECT 1 FROM holder) AS lease_lock_found, NOT (${required}) AS lease_lock_unmet,
           ${intent ? sql`(SELECT id::text FROM intent LIMIT 1)` : sql`NULL::text`} AS lease_lock_intent_id,
           ${readsJson} AS lease_lock_also
      FROM (VALUES (1)) AS one (lease_lock_one)
      LEFT JOIN acquired ON true LEFT JOIN holder ON true`;
}

interface Inspected {
  locked_at: Date | null;
  until: Date | null;
  token: string | null;
  fence: string;
  generation: string | null;
  held: boolean;
  remaining_ms: number;
}

async function inspectLease<DB>(refs: LeaseRefs, db: Kysely<DB>, rowId: RowId): Promise<LeaseState | null> {
  const { table, id, lockedAt, lockedUntil, token, fence, generation, named } = refs;
  const found = await refs.statements.run<DB, Inspected>(
    db,
    [statementKeys.inspect],
    () => sql<Inspected>`${named("inspect")}
      SELECT ${lockedAt} AS locked_at, ${lockedUntil} AS until, ${token}::text AS token, ${fence}::text AS fence,
             ${generation ?? sql`NULL`}::text AS generation,
             coalesce(${lockedUntil} > now(), false) AS held, coalesce(${millisecondsLeft(lockedUntil)}, 0) AS remaining_ms
        FROM ${table} WHERE ${id} = ${leaseParams.rowId}`,
    { [leaseParams.rowId.name]: rowId },
  );
  const row = found.rows[0];
  if (!row) return null;
  return {
    held: row.held,
    lockedAt: row.locked_at,
    expiresAt: row.until,
    token: row.token,
    fence: BigInt(row.fence),
    generation: row.generation === null ? null : BigInt(row.generation),
    remainingMs: row.held ? row.remaining_ms : 0,
  };
}
