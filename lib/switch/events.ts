/** What happened, in words, for the page: take-overs, recoveries, fenced calls, lost leases, failed releases. */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { UserNotFound } from "../core/problems";
import { findUser } from "./users";

export type EventKind =
  | "lease-taken-over"
  | "recovered"
  | "fenced"
  | "lease-lost"
  | "release-failed"
  /** A request refused at acquisition: the collision itself. */
  | "refused";

export interface OperationEvent {
  /** Its row: a page that read the event with the list knows its streamed message. */
  id: string;
  at: string;
  userId: string;
  operationId: string | null;
  kind: EventKind;
  message: string;
}

export async function recordEvent(db: Kysely<Database>, event: Omit<OperationEvent, "id" | "at">): Promise<void> {
  await db
    .insertInto("operation_events")
    .values({ user_id: event.userId, operation_id: event.operationId, kind: event.kind, message: event.message })
    .execute();
}

/** The last 30 events, newest first: of one user (an id no user has is a 404), or all. */
export async function recentEvents(db: Kysely<Database>, userId?: string): Promise<OperationEvent[]> {
  if (userId !== undefined && !(await findUser(db, userId))) throw new UserNotFound(userId);
  let query = db.selectFrom("operation_events").selectAll().orderBy("id", "desc").limit(30);
  if (userId) query = query.where("user_id", "=", userId);
  const rows = await query.execute();
  return rows.map((row) => ({
    id: row.id,
    at: row.at.toISOString(),
    userId: row.user_id,
    operationId: row.operation_id,
    kind: row.kind as EventKind,
    message: row.message,
  }));
}

export const shortId = (operationId: string): string => operationId.slice(0, 8);
