/**
 * Who holds what: the users whose lease is held now, as the lease's `holders()` pages them, with the database's
 * time of the read. Both are read in one transaction, so `readAt` is the very `now()` the holders were
 * filtered by: a lease shown expires after `readAt`, and one missing had expired (or was free) by then.
 */
import { sql, type Kysely } from "kysely";
import { z } from "zod";
import type { Database } from "../../db/schema";
import { identityActionLease } from "../switch/users";

export const holdersLimitSchema = z.coerce.number().int().min(1).max(100).default(50);

export interface LeaseHolderView {
  userId: string;
  lockedAt: string | null;
  expiresAt: string;
  fence: string;
  remainingMs: number;
}

export interface HoldersView {
  /** The database's clock at the read. */
  readAt: string;
  holders: LeaseHolderView[];
  /** Whether more holders than `limit` were found (they are not listed). */
  more: boolean;
}

export async function whoHoldsWhat(db: Kysely<Database>, limit: number): Promise<HoldersView> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ now: Date }>`SELECT now() AS now`.execute(trx);
    const page = await identityActionLease.holders(trx, { limit });
    return {
      readAt: rows[0]!.now.toISOString(),
      holders: page.holders.map((holder) => ({
        userId: String(holder.rowId),
        lockedAt: holder.lockedAt?.toISOString() ?? null,
        expiresAt: holder.expiresAt.toISOString(),
        fence: holder.fence.toString(),
        remainingMs: holder.remainingMs,
      })),
      more: page.next !== null,
    };
  });
}
