import { sql, type Kysely, type RawBuilder } from "kysely";

/**
 * A lease lock stored as data on the protected row. Every statement here is a single autocommit
 * UPDATE or SELECT: no transaction and no connection is held between acquire and release. All time
 * arithmetic uses the database clock (`now()`), never a timestamp computed in Node.
 */
export interface LeaseColumns {
  table: string;
  id: string;
  lockedAt: string;
  token: string;
  fence: string;
}

export interface Lease {
  token: string;
  /** Grows by one at every acquisition of this row's lease: a fencing token. */
  fence: bigint;
  /** When the lease expires, as the database computed it. */
  expiresAt: Date;
  /** How long it had left when the database answered: a duration, safe to apply to a monotonic clock. */
  remainingMs: number;
}

export type AcquireResult =
  | { acquired: true; lease: Lease; /** What `recordIntent` returned (its first row's `id`), if given. */ intentId: string | null }
  | { acquired: false; reason: "held"; expiresAt: Date | null; remainingMs: number }
  | { acquired: false; reason: "not-found" };

export interface LeaseState {
  held: boolean;
  expiresAt: Date | null;
  /** 0 when not held. */
  remainingMs: number;
}

/**
 * Builds a statement that runs inside the acquiring statement itself, reading the just-acquired row
 * from the CTE `acquired` (its columns plus `lease_lock_fence`), e.g. an INSERT … SELECT … RETURNING id.
 */
export type IntentRecorder = () => RawBuilder<unknown>;

export interface LeaseLock {
  acquire(db: Kysely<any>, id: string, ttlMs: number, recordIntent?: IntentRecorder): Promise<AcquireResult>;
  /** Whether `token` still holds an unexpired lease on the row. */
  holds(db: Kysely<any>, id: string, token: string, ttlMs: number): Promise<boolean>;
  /** Extends my lease to now + ttl; false when it is no longer mine (expired or taken over). */
  renew(db: Kysely<any>, id: string, token: string, ttlMs: number): Promise<Date | null>;
  /** Clears the lease only if it is still mine; false when someone else holds it now (or nobody). */
  release(db: Kysely<any>, id: string, token: string): Promise<boolean>;
  inspect(db: Kysely<any>, id: string, ttlMs: number): Promise<LeaseState | null>;
}

const interval = (ttlMs: number): RawBuilder<unknown> => sql`(${ttlMs}::double precision * interval '1 millisecond')`;
const millisecondsUntil = (moment: RawBuilder<unknown>): RawBuilder<number> =>
  sql<number>`greatest(0, extract(epoch FROM (${moment} - clock_timestamp())) * 1000)::float8`;

export function leaseLock(columns: LeaseColumns): LeaseLock {
  const table = sql.table(columns.table);
  const id = sql.ref(columns.id);
  const lockedAt = sql.ref(columns.lockedAt);
  const token = sql.ref(columns.token);
  const fence = sql.ref(columns.fence);

  return {
    async acquire(db, rowId, ttlMs, recordIntent) {
      const expiry = sql`${lockedAt} + ${interval(ttlMs)}`;
      // One statement: the conditional UPDATE and, in the same atomic step, the caller's intent record.
      const taken = await sql<{ token: string; fence: string; expires_at: Date; remaining_ms: number; intent_id: string | null }>`
        WITH acquired AS (
          UPDATE ${table}
             SET ${lockedAt} = now(), ${token} = gen_random_uuid(), ${fence} = ${fence} + 1
           WHERE ${id} = ${rowId}
             AND (${lockedAt} IS NULL OR ${lockedAt} < now() - ${interval(ttlMs)})
          RETURNING *, ${fence} AS lease_lock_fence, ${token} AS lease_lock_token, ${expiry} AS lease_lock_expires_at
        ), intent AS (${recordIntent ? recordIntent() : sql`SELECT NULL::text AS id WHERE false`})
        SELECT lease_lock_token AS token, lease_lock_fence::text AS fence, lease_lock_expires_at AS expires_at,
               ${millisecondsUntil(sql`lease_lock_expires_at`)} AS remaining_ms, (SELECT id::text FROM intent LIMIT 1) AS intent_id
          FROM acquired`.execute(db);
      const row = taken.rows[0];
      if (row) {
        return {
          acquired: true,
          lease: { token: row.token, fence: BigInt(row.fence), expiresAt: row.expires_at, remainingMs: row.remaining_ms },
          intentId: row.intent_id,
        };
      }
      // Only to tell the loser when to come back; the decision above was already made atomically.
      const holder = await this.inspect(db, rowId, ttlMs);
      if (!holder) return { acquired: false, reason: "not-found" };
      return { acquired: false, reason: "held", expiresAt: holder.expiresAt, remainingMs: holder.remainingMs };
    },

    async renew(db, rowId, ownToken, ttlMs) {
      const renewed = await sql<{ expires_at: Date }>`
        UPDATE ${table} SET ${lockedAt} = now()
         WHERE ${id} = ${rowId} AND ${token} = ${ownToken} AND ${lockedAt} >= now() - ${interval(ttlMs)}
        RETURNING ${lockedAt} + ${interval(ttlMs)} AS expires_at`.execute(db);
      return renewed.rows[0]?.expires_at ?? null;
    },

    async holds(db, rowId, ownToken, ttlMs) {
      const found = await sql`
        SELECT 1 FROM ${table} WHERE ${id} = ${rowId} AND ${token} = ${ownToken} AND ${lockedAt} >= now() - ${interval(ttlMs)}`.execute(db);
      return found.rows.length === 1;
    },

    async release(db, rowId, ownToken) {
      const released = await sql`
        UPDATE ${table} SET ${lockedAt} = NULL, ${token} = NULL
         WHERE ${id} = ${rowId} AND ${token} = ${ownToken}`.execute(db);
      return released.numAffectedRows === 1n;
    },

    async inspect(db, rowId, ttlMs) {
      const expiry = sql`${lockedAt} + ${interval(ttlMs)}`;
      const found = await sql<{ held: boolean; expires_at: Date | null; remaining_ms: number | null }>`
        SELECT ${lockedAt} IS NOT NULL AND ${lockedAt} >= now() - ${interval(ttlMs)} AS held,
               ${expiry} AS expires_at, ${millisecondsUntil(expiry)} AS remaining_ms
          FROM ${table} WHERE ${id} = ${rowId}`.execute(db);
      const row = found.rows[0];
      if (!row) return null;
      return row.held ? { held: true, expiresAt: row.expires_at, remainingMs: row.remaining_ms ?? 0 } : { held: false, expiresAt: null, remainingMs: 0 };
    },
  };
}

/** The lease that guards a user's identity actions (promote to primary). */
export const identityActionLease = leaseLock({
  table: "users",
  id: "id",
  lockedAt: "identity_action_locked_at",
  token: "identity_action_lock_token",
  fence: "identity_action_fence",
});
