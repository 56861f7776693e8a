/**
 * Who holds what: a page of the rows whose lease is held now, in the order of their ids, each with its
 * holder's token, when it was taken, its expiry and its fence. One statement; the next page starts after
 * the last id of this one (keyset paging: a row taken or freed meanwhile never shifts the others).
 */
import { sql, type Kysely } from "kysely";
import { millisecondsLeft, statementKeys, type LeaseRefs } from "./lease-handle.ts";
import type { RowId } from "./lease-lock.ts";
import { param } from "./statements.ts";

/** One current holder: the row, and its lease as the database sees it. */
export interface LeaseHolder {
  rowId: RowId;
  token: string;
  lockedAt: Date | null;
  expiresAt: Date;
  fence: bigint;
  remainingMs: number;
}

export interface HoldersPage {
  holders: LeaseHolder[];
  /** The id to pass as `after` for the next page; null on the last. */
  next: RowId | null;
}

export interface HoldersQuery {
  /** At most this many holders (1 to 1000); default 100. */
  limit?: number;
  /** Only rows whose id sorts after this one (the previous page's `next`). */
  after?: RowId | null;
}

interface HolderRow {
  row_id: RowId;
  token: string;
  locked_at: Date | null;
  until: Date;
  fence: string;
  remaining_ms: number;
}

const after = param<RowId | null>("after");
const rows = param<number>("rows");

export async function leaseHolders<DB>(
  refs: LeaseRefs,
  db: Kysely<DB>,
  { limit = 100, after: afterId = null }: HoldersQuery = {},
): Promise<HoldersPage> {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1_000)
    throw new RangeError(`holders: limit must be an integer from 1 to 1000, not ${limit}`);
  const { table, id, lockedAt, lockedUntil, token, fence, named } = refs;
  const found = await refs.statements.run<DB, HolderRow>(
    db,
    [statementKeys.holders],
    () => sql<HolderRow>`${named("holders")}
      SELECT ${id} AS row_id, ${token}::text AS token, ${lockedAt} AS locked_at, ${lockedUntil} AS until,
             ${fence}::text AS fence, ${millisecondsLeft(lockedUntil)} AS remaining_ms
        FROM ${table}
       WHERE ${lockedUntil} > now() AND (${after}::text IS NULL OR ${id} > ${after})
       ORDER BY ${id} LIMIT ${rows}`,
    { after: afterId, rows: limit + 1 },
  );
  const holders = found.rows.slice(0, limit).map((row) => ({
    rowId: row.row_id,
    token: row.token,
    lockedAt: row.locked_at,
    expiresAt: row.until,
    fence: BigInt(row.fence),
    remainingMs: row.remaining_ms,
  }));
  return { holders, next: found.rows.length > limit ? holders[holders.length - 1]!.rowId : null };
}
