/**
 * A lease lock stored as data on the protected row: four nullable columns (when it was taken, until when
 * it holds, the holder's token) and a fence that grows at every acquisition. Each statement here is one
 * autocommit statement: no transaction and no connection is held between acquire and release. Every
 * moment is the database's (`now()`, `clock_timestamp()`); Node only ever receives durations.
 */
import { sql, type Kysely, type RawBuilder, type Selectable } from "kysely";
import { preparedMarker } from "../../db/prepared-statements";

/** The columns of `Row` whose selected type is assignable to `Value`: the lock's columns are checked. */
type ColumnsOfType<Row, Value> = {
  [K in keyof Selectable<Row> & string]: Selectable<Row>[K] extends Value ? K : never;
}[keyof Selectable<Row> & string];

/** Where a lease lives: a table of `DB` and its columns, each checked against the type it must have. */
export interface LeaseColumns<DB, TB extends keyof DB & string> {
  table: TB;
  id: ColumnsOfType<DB[TB], string | number>;
  /** When the current lease was taken; written only by acquire. */
  lockedAt: ColumnsOfType<DB[TB], Date | null>;
  /** Until when it holds, as its holder chose at acquisition (and renewals extended). */
  lockedUntil: ColumnsOfType<DB[TB], Date | null>;
  token: ColumnsOfType<DB[TB], string | null>;
  fence: ColumnsOfType<DB[TB], string | number | bigint>;
}

/**
 * A statement run inside the acquiring statement itself (so it is atomic with it), reading the acquired
 * row from the CTE `acquired`: its columns plus `lease_lock_fence`. E.g. `INSERT … SELECT … FROM acquired RETURNING id`.
 */
export type IntentRecorder = () => RawBuilder<unknown>;

export interface AcquireOptions {
  ttlMs: number;
  /** The most a renewal may extend the lease to, counted from `lockedAt`; null: no cap. */
  maxHoldMs?: number | null;
  intent?: IntentRecorder;
}

/** A held lease. Its methods are closures: they may be passed around without their object. */
export interface LeaseHandle {
  readonly rowId: string;
  readonly token: string;
  /** Grows by one at every acquisition of this row's lease: a fencing token. */
  readonly fence: bigint;
  /** When the lease expires, as the database last said (renewals move it). */
  readonly expiresAt: Date;
  /** How long it had left when the database last answered… */
  readonly remainingMs: number;
  /** …and when that was, on this process's monotonic clock (`performance.now()`). */
  readonly answeredAt: number;
  /** Extends the lease to now + TTL (never past the hold cap); false when it is no longer mine. */
  renew(): Promise<boolean>;
  /** Keeps the lease at least until `untilMs` from now, past the hold cap; false when it is no longer mine. */
  holdFor(untilMs: number): Promise<boolean>;
  /** Whether it is still mine and unexpired. */
  holds(): Promise<boolean>;
  /** Clears it only if it is still mine; false when someone else holds it now (or nobody does). */
  release(): Promise<boolean>;
}

export type Acquisition =
  | {
      acquired: true;
      lease: LeaseHandle;
      /** What the intent recorder returned (its first row's `id`). */ intentId: string | null;
      /** The protected row as the acquisition left it (JSON: dates as ISO strings), read by the same statement. */
      row: Record<string, unknown>;
    }
  | { acquired: false; reason: "held"; heldUntil: Date | null; remainingMs: number }
  | { acquired: false; reason: "not-found" };

/** The lease as the database sees it, for display and tests. */
export interface LeaseState {
  held: boolean;
  lockedAt: Date | null;
  expiresAt: Date | null;
  token: string | null;
  fence: bigint;
  /** 0 when not held. */
  remainingMs: number;
}

export interface LeaseLock<DB> {
  acquire(db: Kysely<DB>, rowId: string, options: AcquireOptions): Promise<Acquisition>;
  inspect(db: Kysely<DB>, rowId: string): Promise<LeaseState | null>;
}

/** Sent first in each statement: the lease's statements run as named prepared statements (prepared.ts). */
const prepared = sql.raw(preparedMarker);

const interval = (ms: number): RawBuilder<unknown> => sql`make_interval(secs => ${ms / 1000})`;
const millisecondsLeft = (moment: RawBuilder<unknown>): RawBuilder<number> =>
  sql<number>`greatest(0, extract(epoch FROM (${moment} - clock_timestamp())) * 1000)::float8`;

interface TakenRow {
  acquired: boolean;
  token: string | null;
  fence: string | null;
  until: Date | null;
  remaining_ms: number;
  intent_id: string | null;
  row: Record<string, unknown> | null;
}

export function leaseLock<DB, TB extends keyof DB & string>(columns: LeaseColumns<DB, TB>): LeaseLock<DB> {
  const table = sql.table(columns.table);
  const id = sql.ref(columns.id);
  const lockedAt = sql.ref(columns.lockedAt);
  const lockedUntil = sql.ref(columns.lockedUntil);
  const token = sql.ref(columns.token);
  const fence = sql.ref(columns.fence);

  function handle(
    db: Kysely<DB>,
    rowId: string,
    taken: { token: string; fence: bigint; until: Date; remainingMs: number },
    options: AcquireOptions,
  ): LeaseHandle {
    const state = { expiresAt: taken.until, remainingMs: taken.remainingMs, answeredAt: performance.now() };
    const note = (row: { until: Date; remaining_ms: number } | undefined): boolean => {
      if (!row) return false;
      Object.assign(state, { expiresAt: row.until, remainingMs: row.remaining_ms, answeredAt: performance.now() });
      return true;
    };
    const mine = sql`${id} = ${rowId} AND ${token} = ${taken.token} AND ${lockedUntil} > now()`;
    const cap =
      options.maxHoldMs == null ? sql`'infinity'::timestamptz` : sql`${lockedAt} + ${interval(options.maxHoldMs)}`;

    return {
      rowId,
      token: taken.token,
      fence: taken.fence,
      get expiresAt() {
        return state.expiresAt;
      },
      get remainingMs() {
        return state.remainingMs;
      },
      get answeredAt() {
        return state.answeredAt;
      },
      // Owner-checked: the token and an unexpired lease, in the WHERE of one UPDATE. The cap is kept by
      // the database from `locked_at`, so no process, however confused its clock, can hold it longer.
      async renew() {
        const renewed = await sql<{ until: Date; remaining_ms: number }>`${prepared}
          UPDATE ${table} SET ${lockedUntil} = greatest(${lockedUntil}, least(now() + ${interval(options.ttlMs)}, ${cap}))
           WHERE ${mine}
          RETURNING ${lockedUntil} AS until, ${millisecondsLeft(lockedUntil)} AS remaining_ms`.execute(db);
        return note(renewed.rows[0]);
      },
      async holdFor(untilMs) {
        const held = await sql<{ until: Date; remaining_ms: number }>`${prepared}
          UPDATE ${table} SET ${lockedUntil} = greatest(${lockedUntil}, clock_timestamp() + ${interval(untilMs)})
           WHERE ${mine}
          RETURNING ${lockedUntil} AS until, ${millisecondsLeft(lockedUntil)} AS remaining_ms`.execute(db);
        return note(held.rows[0]);
      },
      async holds() {
        const found = await sql<{ until: Date; remaining_ms: number }>`${prepared}
          SELECT ${lockedUntil} AS until, ${millisecondsLeft(lockedUntil)} AS remaining_ms FROM ${table} WHERE ${mine}`.execute(
          db,
        );
        return note(found.rows[0]);
      },
      async release() {
        const released = await sql`${prepared}
          UPDATE ${table} SET ${lockedAt} = NULL, ${lockedUntil} = NULL, ${token} = NULL
           WHERE ${id} = ${rowId} AND ${token} = ${taken.token}`.execute(db);
        return released.numAffectedRows === 1n;
      },
    };
  }

  return {
    async acquire(db, rowId, options) {
      // One statement answers winner and losers alike. The UPDATE takes the row lock; a concurrent
      // acquirer waits for it, then re-checks the WHERE against the committed row and matches 0 rows.
      // A loser then reads the holder's expiry with FOR SHARE, which conflicts with the winner's UPDATE and
      // so follows the row to its newest committed version (a plain read, or FOR KEY SHARE, which does not
      // conflict with a non-key UPDATE, would return the statement's older snapshot: no expiry at all).
      // Losers thus learn when to come back without a second round trip. The winner gets the row as it
      // left it, so work that needs the row's other columns does not read it again.
      const intent = options.intent ? sql`, intent AS (${options.intent()})` : sql``;
      const intentId = options.intent ? sql`(SELECT id::text FROM intent LIMIT 1)` : sql`NULL::text`;
      const taken = await sql<TakenRow>`${prepared}
        WITH acquired AS (
          UPDATE ${table}
             SET ${lockedAt} = now(), ${lockedUntil} = now() + ${interval(options.ttlMs)},
                 ${token} = gen_random_uuid(), ${fence} = ${fence} + 1
           WHERE ${id} = ${rowId} AND (${lockedUntil} IS NULL OR ${lockedUntil} < now())
          RETURNING *, ${fence} AS lease_lock_fence, ${token} AS lease_lock_token, ${lockedUntil} AS lease_lock_until
        )${intent}
        SELECT true AS acquired, lease_lock_token::text AS token, lease_lock_fence::text AS fence, lease_lock_until AS until,
               ${millisecondsLeft(sql`lease_lock_until`)} AS remaining_ms, ${intentId} AS intent_id,
               to_jsonb(acquired) - 'lease_lock_fence' - 'lease_lock_token' - 'lease_lock_until' AS row
          FROM acquired
        UNION ALL
        SELECT false, NULL, NULL, holder.until, ${millisecondsLeft(sql`holder.until`)}, NULL, NULL
          FROM (SELECT ${lockedUntil} AS until FROM ${table}
                 WHERE ${id} = ${rowId} AND NOT EXISTS (SELECT 1 FROM acquired) FOR SHARE) AS holder`.execute(db);
      const row = taken.rows[0];
      if (!row) return { acquired: false, reason: "not-found" };
      if (!row.acquired)
        return { acquired: false, reason: "held", heldUntil: row.until, remainingMs: row.remaining_ms };
      const lease = handle(
        db,
        rowId,
        { token: row.token!, fence: BigInt(row.fence!), until: row.until!, remainingMs: row.remaining_ms },
        options,
      );
      return { acquired: true, lease, intentId: row.intent_id, row: row.row! };
    },

    async inspect(db, rowId) {
      const found = await sql<{
        locked_at: Date | null;
        until: Date | null;
        token: string | null;
        fence: string;
        held: boolean;
        remaining_ms: number;
      }>`${prepared}
        SELECT ${lockedAt} AS locked_at, ${lockedUntil} AS until, ${token}::text AS token, ${fence}::text AS fence,
               coalesce(${lockedUntil} > now(), false) AS held, coalesce(${millisecondsLeft(lockedUntil)}, 0) AS remaining_ms
          FROM ${table} WHERE ${id} = ${rowId}`.execute(db);
      const row = found.rows[0];
      if (!row) return null;
      return {
        held: row.held,
        lockedAt: row.locked_at,
        expiresAt: row.until,
        token: row.token,
        fence: BigInt(row.fence),
        remainingMs: row.held ? row.remaining_ms : 0,
      };
    },
  };
}
