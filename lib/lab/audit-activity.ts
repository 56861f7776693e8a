/**
 * What may still change each user's state, read for the audit in one statement on the database's clock:
 * the lease, the journal entries that are open or whose calls may land, the requests nothing bounds, and the
 * provider writes whose caller got no answer (settling.ts says what each means). Plus a fingerprint of
 * everything an operation changes, to tell whether one moved while the audit read the state.
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../../db/schema";
import type { JournalFact, UnansweredWrite, UserActivity } from "./settling";

/** How long back an unanswered request counts as running: as far back as the page draws lanes. */
const runningLaneWindowMs = 10 * 60_000;

export interface Activity {
  /** The database's clock when it was read. */
  now: Date;
  users: Map<string, UserActivity & { fingerprint: string }>;
}

interface Row {
  user_id: string;
  now: Date;
  fingerprint: string;
  lease: { fence: string; until: string } | null;
  journal: (Omit<JournalFact, "inFlightUntil"> & { inFlightUntil: string | null })[];
  unbounded_requests: number;
  writes: (Omit<UnansweredWrite, "until"> & { until: string })[];
}

/**
 * Requests with no bound: unanswered, under any strategy but the lease, and under the lease before the
 * acquisition answered (once it has, the lease and the journal bound it; a refused one changes nothing).
 * Writes with no answer: a lane's unlink or link that ended without an HTTP status (`timeout`,
 * `network-error`, `client-closed`, …), until the provider's apply limit after the caller stopped waiting.
 */
export async function readActivity(db: Kysely<Database>, applyLimitMs: number): Promise<Activity> {
  const limit = sql`make_interval(secs => ${applyLimitMs / 1000})`;
  const { rows } = await sql<Row>`
    WITH recent AS (
      SELECT * FROM operation_lanes
       WHERE requested_at > clock_timestamp() - make_interval(secs => ${runningLaneWindowMs / 1000})
    ), journal AS (
      SELECT j.user_id, jsonb_build_object('operationId', j.operation_id, 'fence', j.fence::text,
               'open', j.step NOT IN ('done', 'resolved'), 'endedWith', j.ended_with,
               'inFlightUntil', lab_iso(j.in_flight_until),
               'answered', EXISTS (SELECT 1 FROM operation_lanes l
                                    WHERE l.operation_id = j.operation_id AND l.answered_at IS NOT NULL)) AS fact
        FROM switch_journal j
       WHERE j.step NOT IN ('done', 'resolved') OR j.in_flight_until > clock_timestamp()
    ), unbounded AS (
      SELECT l.user_id FROM recent l
       WHERE l.answered_at IS NULL
         AND (l.strategy <> 'lease' OR NOT (
               EXISTS (SELECT 1 FROM switch_journal j WHERE j.operation_id = l.operation_id)
               OR l.phases @> '[{"name": "acquire", "outcome": "refused"}]'))
    ), writes AS (
      SELECT l.user_id, jsonb_build_object('operationId', l.operation_id, 'phase', phase->>'name',
               'accounts', coalesce(phase->'accounts', '[]'), 'attempts', (phase->>'attempts')::int,
               'until', lab_iso(landing.until)) AS write
        FROM recent l
       CROSS JOIN LATERAL jsonb_array_elements(l.phases) AS phase
       CROSS JOIN LATERAL (SELECT (phase->>'endedAt')::timestamptz + ${limit} AS until) landing
       WHERE (l.answered_at IS NULL OR l.answered_at > clock_timestamp() - ${limit})
         AND phase->>'name' IN ('unlink', 'link') AND phase->>'outcome' !~ '^[0-9]+$' AND phase->>'outcome' <> 'fenced'
         AND landing.until > clock_timestamp()
    )
    SELECT u.id AS user_id, clock_timestamp() AS now,
           concat_ws('/', u.version, u.primary_identity_id, u.identity_action_lock_token, u.identity_action_locked_until,
             (SELECT concat_ws(',', max(j.id), max(j.updated_at)) FROM switch_journal j WHERE j.user_id = u.id),
             (SELECT concat_ws(',', max(l.requested_at), max(l.answered_at), count(*) FILTER (WHERE l.answered_at IS NULL))
                FROM recent l WHERE l.user_id = u.id)) AS fingerprint,
           CASE WHEN u.identity_action_locked_until > clock_timestamp()
                THEN jsonb_build_object('fence', u.identity_action_fence::text, 'until', lab_iso(u.identity_action_locked_until))
           END AS lease,
           coalesce((SELECT jsonb_agg(fact) FROM journal WHERE journal.user_id = u.id), '[]') AS journal,
           (SELECT count(*)::int FROM unbounded WHERE unbounded.user_id = u.id) AS unbounded_requests,
           coalesce((SELECT jsonb_agg(write) FROM writes WHERE writes.user_id = u.id), '[]') AS writes
      FROM users u`.execute(db);
  return { now: rows[0]?.now ?? new Date(), users: new Map(rows.map((row) => [row.user_id, activityOf(row)])) };
}

function activityOf(row: Row): UserActivity & { fingerprint: string } {
  return {
    fingerprint: row.fingerprint,
    lease: row.lease && { fence: row.lease.fence, until: new Date(row.lease.until) },
    journal: row.journal.map((fact) => ({
      ...fact,
      inFlightUntil: fact.inFlightUntil === null ? null : new Date(fact.inFlightUntil),
    })),
    unboundedRequests: row.unbounded_requests,
    unansweredWrites: row.writes.map((write) => ({ ...write, until: new Date(write.until) })),
  };
}
