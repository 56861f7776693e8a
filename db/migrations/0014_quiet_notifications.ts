import { sql, type Kysely } from "kysely";

/**
 * Notifications that cost only what their listeners need. A transaction that notifies commits under a
 * database-wide lock (PreCommit_Notify), so its commit shares no WAL flush with another's:
 * - The journal tells the reconcilers of an entry only when its operation ended without finishing it
 *   (`ended_with` set): that entry will be due. A switch that finishes never wakes them; one whose process
 *   died leaves an entry that the reconcilers' sweep finds (lib/switch/reconciler.ts).
 * - A lane's row announces itself by id and instance alone: an instance with nobody watching reads nothing,
 *   and its own lanes it has shown already, from memory (lib/lab/stream.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER switch_journal_notify ON switch_journal`.execute(db);
  await sql`
    CREATE TRIGGER switch_journal_notify AFTER UPDATE OF ended_with ON switch_journal
      FOR EACH ROW WHEN (OLD.ended_with IS NULL AND NEW.ended_with IS NOT NULL)
      EXECUTE FUNCTION switch_journal_notify()`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION lab_notify_lane() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('lab_stream', jsonb_build_object(
        'kind', 'operation', 'operationId', NEW.operation_id, 'instance', NEW.instance)::text);
      RETURN NULL;
    END $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER switch_journal_notify ON switch_journal`.execute(db);
  await sql`
    CREATE TRIGGER switch_journal_notify AFTER INSERT ON switch_journal
      FOR EACH ROW EXECUTE FUNCTION switch_journal_notify()`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION lab_notify_lane() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE payload text := jsonb_build_object('kind', 'operation', 'data', lab_lane_json(NEW))::text;
    BEGIN
      IF octet_length(payload) > 7900 THEN
        payload := jsonb_build_object('kind', 'operation', 'operationId', NEW.operation_id)::text;
      END IF;
      PERFORM pg_notify('lab_stream', payload);
      RETURN NULL;
    END $$`.execute(db);
}
