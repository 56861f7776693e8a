import { sql, type Kysely } from "kysely";

/**
 * A streamed event and a streamed provider call carry their row's id, as the lists read whole do
 * (`GET /api/lab/events`, `GET /api/lab/provider`): a page whose read of a list lands with a row in it before that
 * row's message (a provider call's crosses a relay from the provider's database, lib/lab/provider-call-relay.ts)
 * knows the message for the row it already shows, and does not show it twice. The event's stays gated as 0016 made
 * it; the provider call's stays ungated (its database may be another one).
 */
const notifyEvent = (withId: boolean) =>
  sql.raw(`PERFORM pg_notify('lab_stream', jsonb_build_object('kind', 'event', 'data', jsonb_build_object(
        ${withId ? "'id', NEW.id::text, " : ""}'at', lab_iso(NEW.at), 'userId', NEW.user_id,
        'operationId', NEW.operation_id, 'kind', NEW.kind, 'message', left(NEW.message, 3000)))::text);`);

const notifyProviderCall = (withId: boolean) =>
  sql.raw(`PERFORM pg_notify('lab_stream', jsonb_build_object('kind', 'provider-call', 'data', jsonb_build_object(
        ${withId ? "'id', NEW.id::text, " : ""}'at', lab_iso(NEW.at), 'method', NEW.method,
        'path', left(NEW.path, 1000), 'status', NEW.status, 'operationId', NEW.operation_id,
        'durationMs', NEW.duration_ms, 'outcome', NEW.outcome))::text);`);

async function replaceTriggerFunctions(db: Kysely<unknown>, withId: boolean): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION lab_notify_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF lab_watched() THEN
        ${notifyEvent(withId)}
      END IF;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION lab_notify_provider_call() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${notifyProviderCall(withId)}
      RETURN NULL;
    END $$`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await replaceTriggerFunctions(db, true);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await replaceTriggerFunctions(db, false);
}
