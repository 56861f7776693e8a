/**
 * A held lease: the owner-checked statements its holder sends (renew, hold, release, writes under the lease).
 * Each is one autocommit statement whose WHERE carries the holder's token, so a holder that lost the lease,
 * however confused its clock, changes nothing. Every moment is the database's. The lease's own statements are
 * compiled once per lock, database and `onExtend` (statements.ts), the holder's row, token and durations their
 * parameters.
 */
import {
  sql,
  type Kysely,
  type RawBuilder,
  type UpdateObject,
  type UpdateQueryBuilder,
  type UpdateResult,
} from "kysely";
import type {
  AcquireOptions,
  LeaseColumns,
  LeaseHandle,
  LeaseLock,
  LeaseLockOptions,
  Owner,
  RowId,
} from "./lease-lock.ts";
import { CompiledStatements, none, param, type ParamValues } from "./statements.ts";

/** The lease's columns as SQL references, the marker that names its statements, and their compiled texts. */
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
  /** The optional column that stores the generation a lease was taken in. */
  generation: RawBuilder<unknown> | null;
  named(statement: string): RawBuilder<unknown>;
  statements: CompiledStatements;
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
    generation: columns.generation ? sql.ref(columns.generation) : null,
    named: (statement) =>
      options.preparedName ? sql.raw(`/* prepared: ${options.preparedName}_${statement} */`) : sql``,
    statements: new CompiledStatements(),
  };
}

export const millisecondsLeft = (moment: RawBuilder<unknown>): RawBuilder<number> =>
  sql<number>`greatest(0, extract(epoch FROM (${moment} - clock_timestamp())) * 1000)::float8`;

/** What tells the lease's statements apart in its compiled statements' cache (statements.ts). */
export const statementKeys = { acquire: {}, inspect: {}, holders: {}, renew: {}, hold: {}, holds: {}, release: {} };

/** The parameters of the lease's own statements (prefixed, apart from the names callers give theirs). */
export const leaseParams = {
  rowId: param<RowId>("lease.row_id"),
  token: param<string>("lease.token"),
  ttlSeconds: param<number>("lease.ttl_seconds"),
  /** Null: no cap. */
  maxHoldSeconds: param<number | null>("lease.max_hold_seconds"),
  holdSeconds: param<number>("lease.hold_seconds"),
};

/** An interval of `seconds` (a parameter's). */
export const secondsInterval = (seconds: unknown): RawBuilder<unknown> => sql`make_interval(secs => ${seconds})`;

/** Held by `owner` (its token) and unexpired: the condition of every owner-checked write. */
export const heldBy = ({ id, token, lockedUntil }: LeaseRefs, owner: Owner): RawBuilder<boolean> =>
  sql<boolean>`${id} = ${owner.rowId} AND ${token} = ${owner.token} AND ${lockedUntil} > now()`;

/** Nobody has taken it since `owner` did (every acquisition writes a new token); it may have expired meanwhile. */
const untakenSince = ({ id, token }: LeaseRefs, owner: Owner): RawBuilder<boolean> =>
  sql<boolean>`${id} = ${owner.rowId} AND ${token} = ${owner.token}`;

/** The owner-checked UPDATE of the protected row, as a query. */
function ownerChecked<DB, TB extends keyof DB & string>(
  refs: LeaseRefs,
  db: Kysely<DB>,
  owner: Owner,
  values: UpdateObject<DB, TB>,
): UpdateQueryBuilder<DB, TB, TB, UpdateResult> {
  // Kysely cannot type a table chosen by a generic parameter: the builder is typed at this boundary.
  type AnyTables = Record<string, Record<string, unknown>>;
  return (db as unknown as Kysely<AnyTables>)
    .updateTable(refs.tableName)
    .set(values as UpdateObject<AnyTables, string>)
    .where(heldBy(refs, owner)) as unknown as UpdateQueryBuilder<DB, TB, TB, UpdateResult>;
}

/** The lease's columns as a release leaves them (the fence stays: it only grows). */
const clearedLock = ({ lockColumns }: LeaseRefs): Record<string, null> => ({
  [lockColumns.lockedAt]: null,
  [lockColumns.lockedUntil]: null,
  [lockColumns.token]: null,
});

/** The owner-checked condition and writes, for any owner: the lock's (owners as `param`s) and a handle's. */
export const ownerChecks = <DB, TB extends keyof DB & string>(
  refs: LeaseRefs,
): Pick<LeaseLock<DB, TB>, "heldCondition" | "updating" | "releasing"> => ({
  heldCondition: (owner) => sql<boolean>`EXISTS (SELECT 1 FROM ${refs.table} WHERE ${heldBy(refs, owner)})`,
  updating: (db, owner, values) => ownerChecked(refs, db, owner, values),
  releasing: (db, owner, values) =>
    ownerChecked(refs, db, owner, { ...values, ...clearedLock(refs) } as UpdateObject<DB, TB>),
});

interface Extended {
  until: Date;
  remaining_ms: number;
}

/** What the acquisition gave its holder. */
export interface Taking {
  token: string;
  fence: bigint;
  generation: bigint;
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
  const owner: Owner = { rowId, token: taken.token };
  const checks = ownerChecks<DB, TB>(refs);
  const state = { expiresAt: taken.until, remainingMs: taken.remainingMs, answeredAt: performance.now() };
  const note = (row: Extended | undefined): boolean => {
    if (!row) return false;
    Object.assign(state, { expiresAt: row.until, remainingMs: row.remaining_ms, answeredAt: performance.now() });
    return true;
  };
  // Every statement's values: the caller's (for `onExtend`), the holder's, the durations.
  const values: ParamValues = {
    ...acquireOptions.values,
    [leaseParams.rowId.name]: rowId,
    [leaseParams.token.name]: taken.token,
    [leaseParams.ttlSeconds.name]: acquireOptions.ttlMs / 1000,
    [leaseParams.maxHoldSeconds.name]: acquireOptions.maxHoldMs == null ? null : acquireOptions.maxHoldMs / 1000,
  };
  const extend = async (statement: "renew" | "hold", holdMs = 0): Promise<boolean> => {
    const extended = await extending(refs, db, statement, acquireOptions, {
      ...values,
      [leaseParams.holdSeconds.name]: holdMs / 1000,
    });
    return note(extended.rows[0]);
  };
  const lease: LeaseHandle<DB, TB> = {
    rowId,
    token: taken.token,
    fence: taken.fence,
    generation: taken.generation,
    get expiresAt() {
      return state.expiresAt;
    },
    get remainingMs() {
      return state.remainingMs;
    },
    get answeredAt() {
      return state.answeredAt;
    },
    renew: () => extend("renew"),
    holdFor: (untilMs) => extend("hold", untilMs),
    holds: async () => note((await stillHeld(refs, db, values)).rows[0]),
    release: async () => (await released(refs, db, values)).numAffectedRows === 1n,
    async update(changes) {
      return (await lease.updating(changes).executeTakeFirst()).numUpdatedRows === 1n;
    },
    updating: (changes) => checks.updating(db, owner, changes),
    releasing: (changes) => checks.releasing(db, owner, changes),
    heldCondition: () => checks.heldCondition(owner),
  };
  return lease;
}

/** The expiry, while the lease is its holder's and unexpired; no row otherwise. */
function stillHeld<DB>(refs: LeaseRefs, db: Kysely<DB>, values: ParamValues) {
  const { table, lockedUntil, named } = refs;
  const build = () => sql<Extended>`${named("holds")}
    SELECT ${lockedUntil} AS until, ${millisecondsLeft(lockedUntil)} AS remaining_ms
      FROM ${table} WHERE ${heldBy(refs, leaseParams)}`;
  return refs.statements.run<DB, Extended>(db, [statementKeys.holds], build, values);
}

/** Clears the lease while nobody has taken it since its holder did (whether or not it expired). */
function released<DB>(refs: LeaseRefs, db: Kysely<DB>, values: ParamValues) {
  const { table, lockedAt, lockedUntil, token, named } = refs;
  const build = () => sql`${named("release")}
    UPDATE ${table} SET ${lockedAt} = NULL, ${lockedUntil} = NULL, ${token} = NULL
     WHERE ${untakenSince(refs, leaseParams)}`;
  return refs.statements.run(db, [statementKeys.release], build, values);
}

/**
 * Moves the expiry (never earlier), with the caller's record of it (`onExtend`). A renewal: to now + TTL, never
 * past the hold cap, which the database keeps from `locked_at`, so no process, however confused its clock, can
 * hold it longer; owner-checked (the token and an unexpired lease). A hold keeps others out of what this holder
 * may still cause: past the cap, and while nobody has taken the lease since, even if it expired a moment ago (a
 * slow process between its last call and the hold).
 */
function extending<DB>(
  refs: LeaseRefs,
  db: Kysely<DB>,
  statement: "renew" | "hold",
  { onExtend }: AcquireOptions,
  values: ParamValues,
) {
  const { table, lockedAt, lockedUntil, named } = refs;
  const build = () => {
    const until =
      statement === "renew"
        ? sql`least(now() + ${secondsInterval(leaseParams.ttlSeconds)},
                    coalesce(${lockedAt} + ${secondsInterval(leaseParams.maxHoldSeconds)}, 'infinity'::timestamptz))`
        : sql`clock_timestamp() + ${secondsInterval(leaseParams.holdSeconds)}`;
    const condition = statement === "renew" ? heldBy(refs, leaseParams) : untakenSince(refs, leaseParams);
    const recorded = onExtend ? sql`, recorded AS (${onExtend()})` : sql``;
    return sql<Extended>`${named(statement)}
      WITH extended AS (
        UPDATE ${table} SET ${lockedUntil} = greatest(${lockedUntil}, ${until}) WHERE ${condition}
        RETURNING ${lockedUntil} AS until
      )${recorded}
      SELECT until, ${millisecondsLeft(sql`until`)} AS remaining_ms FROM extended`;
  };
  return refs.statements.run<DB, Extended>(db, [statementKeys[statement], onExtend ?? none], build, values);
}
