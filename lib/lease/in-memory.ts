/**
 * A test double of `leaseLock` for code that uses the lease (ShedLock's users asked for one: #221, #1091):
 * the same `LeaseLock` interface and the same semantics, in memory, on a fake clock. One holder at a time;
 * a lease expires when the clock passes its expiry (`clock.advance`), and is then free for the next
 * acquirer; every acquisition grows the row's fence by one; release, renew, holds and update are
 * owner-checked as the real ones are; renewals stop at the hold cap. It passes the same conformance cases
 * as the real lease (`@lease-lock-lab/lease/conformance`).
 *
 * What needs SQL is not here: `requires`, `intent`, `also` and `onExtend` at acquisition, and `updating`,
 * `releasing` and `heldCondition` (queries to send with other statements), the lock's and the handle's, throw,
 * saying so.
 * Code that composes them is tested on PostgreSQL.
 */
import { randomUUID } from "node:crypto";
import type { Kysely, Selectable, UpdateObject } from "kysely";
import type { HoldersPage, HoldersQuery } from "./holders.ts";
import type { AcquireOptions, Acquisition, LeaseHandle, LeaseLock, LeaseState, RowId } from "./lease-lock.ts";

/** Time as the double's leases see it, in epoch milliseconds; it moves only when told to. */
export interface FakeClock {
  now(): number;
  advance(ms: number): void;
}

export function fakeClock(startsAt = Date.parse("2026-01-01T00:00:00Z")): FakeClock {
  let at = startsAt;
  return {
    now: () => at,
    advance(ms) {
      if (!(ms >= 0)) throw new RangeError(`a fake clock moves forward only, not by ${ms}`);
      at += ms;
    },
  };
}

/** One protected row: the work's own columns, and its lease. */
interface StoredRow {
  rowId: RowId;
  values: Record<string, unknown>;
  lockedAt: number | null;
  until: number | null;
  token: string | null;
  fence: bigint;
}

export interface InMemoryLeaseLock<DB = unknown, TB extends keyof DB & string = keyof DB & string> extends LeaseLock<
  DB,
  TB
> {
  readonly clock: FakeClock;
  /** Adds a free row (its lease never taken, fence 0) with the work's own columns. */
  addRow(rowId: RowId, values?: Record<string, unknown>): void;
  /** The row's own columns as the holders' updates left them; undefined when there is no such row. */
  row(rowId: RowId): Record<string, unknown> | undefined;
}

const needsSql = (what: string) =>
  new Error(`the in-memory lease has no SQL: ${what} needs the real lease on PostgreSQL`);

/** The `db` argument of every call is ignored: the double's rows are its own. `table` names it (telemetry). */
export function inMemoryLeaseLock<DB = unknown, TB extends keyof DB & string = keyof DB & string>(
  clock: FakeClock = fakeClock(),
  table = "in-memory",
): InMemoryLeaseLock<DB, TB> {
  const rows = new Map<string, StoredRow>();
  const key = (rowId: RowId) => String(rowId);
  const held = (row: StoredRow) => row.until !== null && row.until > clock.now();
  return {
    table,
    clock,
    addRow(rowId, values = {}) {
      if (rows.has(key(rowId))) throw new Error(`row ${rowId} is there already`);
      rows.set(key(rowId), { rowId, values: { ...values }, lockedAt: null, until: null, token: null, fence: 0n });
    },
    row: (rowId) => (rows.has(key(rowId)) ? { ...rows.get(key(rowId))!.values } : undefined),
    async acquire(_db: Kysely<DB>, rowId: RowId, options: AcquireOptions): Promise<Acquisition<DB, TB>> {
      for (const option of ["requires", "intent", "also", "onExtend"] as const)
        if (options[option] !== undefined) throw needsSql(`acquire's \`${option}\``);
      const row = rows.get(key(rowId));
      if (!row) return { acquired: false, reason: "not-found" };
      if (row.until !== null && row.until >= clock.now()) {
        const remainingMs = Math.max(0, row.until - clock.now());
        return { acquired: false, reason: "held", heldUntil: new Date(row.until), remainingMs };
      }
      Object.assign(row, { lockedAt: clock.now(), until: clock.now() + options.ttlMs, token: randomUUID() });
      row.fence += 1n;
      const lease = handle<DB, TB>(row, rowId, options, clock, held);
      const selected = { ...row.values } as Selectable<DB[TB]>;
      return { acquired: true, lease, intentId: null, row: selected, also: {} };
    },
    async inspect(_db: Kysely<DB>, rowId: RowId): Promise<LeaseState | null> {
      const row = rows.get(key(rowId));
      if (!row) return null;
      const isHeld = held(row);
      return {
        held: isHeld,
        lockedAt: row.lockedAt === null ? null : new Date(row.lockedAt),
        expiresAt: row.until === null ? null : new Date(row.until),
        token: row.token,
        fence: row.fence,
        // One process, no primary to be promoted: no generation.
        generation: null,
        remainingMs: isHeld ? row.until! - clock.now() : 0,
      };
    },
    holders: async (_db: Kysely<DB>, query?: HoldersQuery) => holdersOf(rows, query, clock, held),
    heldCondition: () => {
      throw needsSql("`lock.heldCondition`");
    },
    updating: () => {
      throw needsSql("`lock.updating`");
    },
    releasing: () => {
      throw needsSql("`lock.releasing`");
    },
  };
}

/** Who holds what, as `lock.holders` pages it: the held rows after `after`, by id. */
function holdersOf(
  rows: Map<string, StoredRow>,
  { limit = 100, after = null }: HoldersQuery = {},
  clock: FakeClock,
  held: (row: StoredRow) => boolean,
): HoldersPage {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1_000)
    throw new RangeError(`holders: limit must be an integer from 1 to 1000, not ${limit}`);
  const ids = [...rows.keys()].sort(byId).filter((id) => after === null || byId(id, String(after)) > 0);
  const holders = ids
    .map((id) => rows.get(id)!)
    .filter(held)
    .map((row) => ({
      rowId: row.rowId,
      token: row.token!,
      lockedAt: new Date(row.lockedAt!),
      expiresAt: new Date(row.until!),
      fence: row.fence,
      remainingMs: row.until! - clock.now(),
    }));
  const page = holders.slice(0, limit);
  return { holders: page, next: holders.length > limit ? page[page.length - 1]!.rowId : null };
}

/** Ids in the database's order for the usual keys: numeric ones as numbers, others as text. */
const byId = (a: string, b: string): number =>
  /^\d+$/.test(a) && /^\d+$/.test(b) ? Number(a) - Number(b) : a < b ? -1 : a > b ? 1 : 0;

function handle<DB, TB extends keyof DB & string>(
  row: StoredRow,
  rowId: RowId,
  { ttlMs, maxHoldMs = null }: AcquireOptions,
  clock: FakeClock,
  held: (row: StoredRow) => boolean,
): LeaseHandle<DB, TB> {
  const token = row.token!;
  const state = { expiresAt: new Date(row.until!), remainingMs: ttlMs, answeredAt: performance.now() };
  const untaken = () => row.token === token;
  const mine = () => untaken() && held(row);
  const answered = (isMine: boolean) => {
    if (isMine) Object.assign(state, { expiresAt: new Date(row.until!), remainingMs: row.until! - clock.now() });
    state.answeredAt = performance.now();
    return isMine;
  };
  const extendTo = (until: number) => (row.until = Math.max(row.until!, until));
  return {
    rowId,
    token,
    fence: row.fence,
    generation: 0n,
    get expiresAt() {
      return state.expiresAt;
    },
    get remainingMs() {
      return state.remainingMs;
    },
    get answeredAt() {
      return state.answeredAt;
    },
    async renew() {
      if (!mine()) return answered(false);
      const cap = maxHoldMs === null ? Infinity : row.lockedAt! + maxHoldMs;
      extendTo(Math.min(clock.now() + ttlMs, cap));
      return answered(true);
    },
    async holdFor(untilMs) {
      if (!untaken()) return answered(false);
      extendTo(clock.now() + untilMs);
      return answered(true);
    },
    holds: async () => answered(mine()),
    async release() {
      if (!untaken()) return false;
      Object.assign(row, { lockedAt: null, until: null, token: null });
      return true;
    },
    async update(values: UpdateObject<DB, TB>) {
      if (!mine()) return false;
      Object.assign(row.values, values);
      return true;
    },
    ...withoutSql,
  };
}

/** The handle's queries to send with other statements: SQL the double does not have. */
const withoutSql = {
  updating: () => {
    throw needsSql("`lease.updating`");
  },
  releasing: () => {
    throw needsSql("`lease.releasing` (and so `releaseWith`)");
  },
  heldCondition: () => {
    throw needsSql("`lease.heldCondition`");
  },
};
