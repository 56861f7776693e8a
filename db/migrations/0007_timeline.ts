import { sql, type Kysely } from "kysely";

/**
 * The timeline: one row per operation (every switch request, refused ones included), written by the
 * instance that runs it, and `lab_stream` notifications from the writes that matter, so that every
 * instance's event stream hears every instance's operations, leases, events and provider calls.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE operation_lanes (
      operation_id uuid PRIMARY KEY,
      user_id text NOT NULL,
      instance text NOT NULL,
      strategy text NOT NULL,
      to_identity_id text NULL,
      requested_at timestamptz NOT NULL,
      answered_at timestamptz NULL,
      status integer NULL,
      problem_type text NULL,
      lease jsonb NULL,
      phases jsonb NOT NULL DEFAULT '[]'
    )`.execute(db);
  await sql`CREATE INDEX operation_lanes_requested_at ON operation_lanes (requested_at)`.execute(db);

  // One shape for the HTTP answer and the notification: the contract's Lane.
  await sql`
    CREATE FUNCTION lab_iso(at timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $$
      SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    $$`.execute(db);
  await sql`
    CREATE FUNCTION lab_lane_json(lane operation_lanes) RETURNS jsonb LANGUAGE sql STABLE AS $$
      SELECT jsonb_build_object(
        'operationId', lane.operation_id, 'userId', lane.user_id, 'instance', lane.instance,
        'strategy', lane.strategy, 'toIdentityId', lane.to_identity_id,
        'requestedAt', lab_iso(lane.requested_at), 'answeredAt', lab_iso(lane.answered_at),
        'status', lane.status, 'problemType', lane.problem_type, 'phases', lane.phases, 'lease', lane.lease)
    $$`.execute(db);

  // A payload must stay under 8,000 bytes: a lane too long to carry is announced by its id alone.
  await sql`
    CREATE FUNCTION lab_notify_lane() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE payload text := jsonb_build_object('kind', 'operation', 'data', lab_lane_json(NEW))::text;
    BEGIN
      IF octet_length(payload) > 7900 THEN
        payload := jsonb_build_object('kind', 'operation', 'operationId', NEW.operation_id)::text;
      END IF;
      PERFORM pg_notify('lab_stream', payload);
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER operation_lanes_notify AFTER INSERT OR UPDATE ON operation_lanes
      FOR EACH ROW EXECUTE FUNCTION lab_notify_lane()`.execute(db);

  await sql`
    CREATE FUNCTION lab_notify_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('lab_stream', jsonb_build_object('kind', 'event', 'data', jsonb_build_object(
        'at', lab_iso(NEW.at), 'userId', NEW.user_id, 'operationId', NEW.operation_id, 'kind', NEW.kind,
        'message', left(NEW.message, 3000)))::text);
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER operation_events_notify AFTER INSERT ON operation_events
      FOR EACH ROW EXECUTE FUNCTION lab_notify_event()`.execute(db);

  await sql`
    CREATE FUNCTION lab_notify_provider_call() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('lab_stream', jsonb_build_object('kind', 'provider-call', 'data', jsonb_build_object(
        'at', lab_iso(NEW.at), 'method', NEW.method, 'path', left(NEW.path, 1000), 'status', NEW.status,
        'operationId', NEW.operation_id, 'durationMs', NEW.duration_ms, 'outcome', NEW.outcome))::text);
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER idp_calls_notify AFTER INSERT ON idp.calls
      FOR EACH ROW EXECUTE FUNCTION lab_notify_provider_call()`.execute(db);

  // The lease as the database sees it, whoever wrote it (the lease lock, or a save that wiped it).
  await sql`
    CREATE FUNCTION lab_lease_json(u users) RETURNS jsonb LANGUAGE sql STABLE AS $$
      SELECT jsonb_build_object(
        'userId', u.id, 'held', u.identity_action_locked_at IS NOT NULL,
        'lockedAt', lab_iso(u.identity_action_locked_at), 'expiresAt', lab_iso(u.identity_action_locked_until),
        'fence', u.identity_action_fence::text, 'token', left(u.identity_action_lock_token::text, 8),
        'operationId', (SELECT j.operation_id FROM switch_journal j
                         WHERE j.user_id = u.id AND j.fence = u.identity_action_fence
                         ORDER BY j.id DESC LIMIT 1))
    $$`.execute(db);
  await sql`
    CREATE FUNCTION lab_notify_lease() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('lab_stream', jsonb_build_object('kind', 'lease', 'data', lab_lease_json(NEW))::text);
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER users_lease_notify AFTER UPDATE ON users FOR EACH ROW
      WHEN (OLD.identity_action_locked_at IS DISTINCT FROM NEW.identity_action_locked_at
         OR OLD.identity_action_locked_until IS DISTINCT FROM NEW.identity_action_locked_until
         OR OLD.identity_action_lock_token IS DISTINCT FROM NEW.identity_action_lock_token)
      EXECUTE FUNCTION lab_notify_lease()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER users_lease_notify ON users`.execute(db);
  await sql`DROP TRIGGER idp_calls_notify ON idp.calls`.execute(db);
  await sql`DROP TRIGGER operation_events_notify ON operation_events`.execute(db);
  await sql`DROP TABLE operation_lanes`.execute(db);
  await sql`
    DROP FUNCTION lab_notify_lease, lab_lease_json, lab_notify_provider_call, lab_notify_event, lab_notify_lane,
      lab_lane_json, lab_iso`.execute(db);
}
