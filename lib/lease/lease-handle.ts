/**
 * A held lease: the owner-checked statements its holder sends (renew, hold, release, writes under the lease).
 * Each is one autocommit statement whose WHERE carries the holder's token, so a holder that lost the lease,
 * however confused its clock, changes nothing. Every moment is the database's.
 */
import {
  sql,
  type Kysely,
  type RawBuilder,
  type UpdateObject,
  type UpdateQueryBuilder,
  type UpdateResult,
} from "kysely";
import type { AcquireOptions, LeaseColumns, LeaseHandle, LeaseLockOptions, RowId } from "./lease-lock.ts";

/** The lease's columns as SQL references, and the marker that names its statements. */
export interface LeaseRefs {
  tableName: string;
  /** The names of the columns a release clears. */
  lockColumns: { lockedAt: string; lockedUntil: string; token: string };
  table: RawBuilder<unknown>;
  id: RawBuilder<unknown>;
  lockedAt: RawBuilder<unknown>;
  lockedUntil: RawBuilder<unknown>;
  token: RawBuilder<unknown>;
  fence: RawBuilder<unknown>;
  named(statement: string): RawBuilder<unknown>;
}

export function leaseRefs<DB, TB extends keyof DB & string>(
  columns: LeaseColumns<DB, TB>,
  options: LeaseLockOptions,
): LeaseRefs {
  return {
    tableName: columns.table,
    lockColumns: { lockedAt: columns.lockedAt, lockedUntil: columns.lockedUntil, token: columns.token },
    table: sql.table(columns.table),
    id: sql.ref(columns.id),
    lockedAt: sql.ref(columns.lockedAt),
    lockedUntil: sql.ref(columns.lockedUntil),
    token: sql.ref(columns.token),
    fence: sql.ref(columns.fence),
    named: (statement) =>
      options.preparedName ? sql.raw(`/* prepared: ${options.preparedName}_${statement} */`) : sql``,
  };
}

export const interval = (ms: number): RawBuilder<unknown> => sql`make_interval(secs => ${ms / 1000})`;
export const millisecondsLeft = (moment: RawBuilder<unknown>): RawBuilder<number> =>
  sql<number>`greatest(0, extract(epoch FROM (${moment} - clock_timestamp())) * 1000)::float8`;

interface Extended {
  until: Date;
  remaining_ms: number;
}

/** What the acquisition gave its holder. */
export interface Taking {
  token: string;
  fence: bigint;
  until: Date;
  remainingMs: number;
}

export function leaseHandle<DB, TB extends keyof DB & string>(
  refs: LeaseRefs,
  db: Kysely<DB>,
  rowId: RowId,
  taken: Taking,
  acquireOptions: AcquireOptions,
): LeaseHandle<DB, TB> {
  const { table, id, lockedAt, lockedUntil, token, named } = refs;
  const state = { expiresAt: taken.until, remainingMs: taken.remainingMs, answeredAt: performance.now() };
  const note = (row: Extended | undefined): boolean => {
    if (!row) return false;
    Object.assign(state, { expiresAt: row.until, remainingMs: row.remaining_ms, answeredAt: performance.now() });
    return true;
  };
  const mine = sql<boolean>`${id} = ${rowId} AND ${token} = ${taken.token} AND ${lockedUntil} > now()`;
  // Nobody has taken it since: every acquisition writes a new token. It may have expired meanwhile.
  const untaken = sql<boolean>`${id} = ${rowId} AND ${token} = ${taken.token}`;
  const extend = extender(refs, db, acquireOptions, note, mine);
  const updating = ownerChecked<DB, TB>(refs, db, mine);
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
    // Owner-checked: the token and an unexpired lease, in the WHERE of one UPDATE. The cap is kept by the
    // database from `locked_at`, so no process, however confused its clock, can hold it longer.
    renew: () =>
      extend("renew", sql`least(now() + ${interval(acquireOptions.ttlMs)}, ${holdCap(refs, acquireOptions)})`),
    // A hold keeps others out of what this holder may still cause: it applies while nobody has taken the
    // lease since, even if it expired a moment ago (a slow process between its last call and the hold).
    holdFor: (untilMs) => extend("hold", sql`clock_timestamp() + ${interval(untilMs)}`, untaken),
    async holds() {
      const found = await sql<Extended>`${named("holds")}
        SELECT ${lockedUntil} AS until, ${millisecondsLeft(lockedUntil)} AS remaining_ms
          FROM ${table} WHERE ${mine}`.execute(db);
      return note(found.rows[0]);
    },
    async release() {
      const released = await sql`${named("release")}
        UPDATE ${table} SET ${lockedAt} = NULL, ${lockedUntil} = NULL, ${token} = NULL
         WHERE ${untaken}`.execute(db);
      return released.numAffectedRows === 1n;
    },
    async update(values) {
      return (await updating(values).executeTakeFirst()).numUpdatedRows === 1n;
    },
    updating,
    releasing: (values) => updating({ ...values, ...clearedLock(refs) } as UpdateObject<DB, TB>),
    heldCondition: () => sql<boolean>`EXISTS (SELECT 1 FROM ${table} WHERE ${mine})`,
  };
}

/** The most renewals may hold the lease to: `maxHoldMs` from when it was taken, kept by the database. */
const holdCap = ({ lockedAt }: LeaseRefs, { maxHoldMs }: AcquireOptions): RawBuilder<unknown> =>
  maxHoldMs == null ? sql`'infinity'::timestamptz` : sql`${lockedAt} + ${interval(maxHoldMs)}`;

/** Moves the expiry to `until` (never earlier) while `condition` holds, with the caller's record of it. */
function extender<DB>(
  { table, lockedUntil, named }: LeaseRefs,
  db: Kysely<DB>,
  { onExtend }: AcquireOptions,
  note: (row: Extended | undefined) => boolean,
  mine: RawBuilder<boolean>,
) {
  const recorded = onExtend ? sql`, recorded AS (${onExtend()})` : sql``;
  return async (statement: string, until: RawBuilder<unknown>, condition = mine): Promise<boolean> => {
    const extended = await sql<Extended>`${named(statement)}
      WITH extended AS (
        UPDATE ${table} SET ${lockedUntil} = greatest(${lockedUntil}, ${until}) WHERE ${condition}
        RETURNING ${lockedUntil} AS until
      )${recorded}
      SELECT until, ${millisecondsLeft(sql`until`)} AS remaining_ms FROM extended`.execute(db);
    return note(extended.rows[0]);
  };
}

/** The owner-checked UPDATE of the protected row, as a query. */
function ownerChecked<DB, TB extends keyof DB & string>(refs: LeaseRefs, db: Kysely<DB>, mine: RawBuilder<boolean>) {
  // Kysely cannot type a table chosen by a generic parameter: the builder is typed at this boundary.
  type AnyTables = Record<string, Record<string, unknown>>;
  return (values: UpdateObject<DB, TB>) =>
    (db as unknown as Kysely<AnyTables>)
      .updateTable(refs.tableName)
      .set(values as UpdateObject<AnyTables, string>)
      .where(mine) as unknown as UpdateQueryBuilder<DB, TB, TB, UpdateResult>;
}

/** The lease's columns as a release leaves them (the fence stays: it only grows). */
const clearedLock = ({ lockColumns }: LeaseRefs): Record<string, null> => ({
  [lockColumns.lockedAt]: null,
  [lockColumns.lockedUntil]: null,
  [lockColumns.token]: null,
});
