/**
 * The timeline as read: the lanes of a stretch of time (`GET /api/lab/timeline`), and one lane (for the
 * stream). Lanes are recorded by lane-recorder.ts and written by lane-writer.ts.
 */
import { sql, type Kysely } from "kysely";
import { z } from "zod";
import type { Database } from "../../db/schema";
import { UserNotFound } from "../core/problems";
import { findUser } from "../switch/users";
import type { Lane } from "./lane";

/** How far back a timeline reaches: whole milliseconds as a query string, up to a day; 60 s by default. */
export const sinceMsSchema = z
  .string()
  .regex(/^\d{1,9}$/, "must be a whole number of milliseconds")
  .transform(Number)
  .pipe(z.number().int().min(1).max(86_400_000))
  .default(60_000);

export interface TimelineQuery {
  userId?: string;
  sinceMs: number;
}

/**
 * The lanes of the last `sinceMs` (of one user, or all), oldest first, with the database's time now; an id no user
 * has is a 404.
 */
export async function readTimeline(
  db: Kysely<Database>,
  { userId, sinceMs }: TimelineQuery,
): Promise<{ now: string; operations: Lane[] }> {
  if (userId !== undefined && !(await findUser(db, userId))) throw new UserNotFound(userId);
  const { rows } = await sql<{ now: string; operations: Lane[] }>`
    SELECT lab_iso(clock_timestamp()) AS now,
           coalesce(jsonb_agg(lab_lane_json(l) ORDER BY l.requested_at, l.operation_id), '[]') AS operations
      FROM operation_lanes l
     WHERE l.requested_at > clock_timestamp() - make_interval(secs => ${sinceMs / 1000})
       AND (${userId ?? null}::text IS NULL OR l.user_id = ${userId ?? null})`.execute(db);
  return rows[0]!;
}

/** The lanes of these operations, as they are written now (one statement for a batch of announcements). */
export async function readLanes(db: Kysely<Database>, operationIds: string[]): Promise<Lane[]> {
  const { rows } = await sql<{ lane: Lane }>`
    SELECT lab_lane_json(l) AS lane FROM operation_lanes l
     WHERE l.operation_id = ANY (${operationIds}::uuid[]) ORDER BY l.requested_at`.execute(db);
  return rows.map((row) => row.lane);
}
