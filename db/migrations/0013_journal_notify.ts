import { sql, type Kysely } from "kysely";

/**
 * Every write to the switch journal tells every instance's reconciler (channel `switch_journal`, the
 * user's id as payload), at commit: it wakes on a half-done switch instead of polling for one. One
 * pg_notify per journal write, 3–4 per switch, each a few microseconds inside a statement the switch
 * sends anyway.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION switch_journal_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('switch_journal', NEW.user_id);
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER switch_journal_notify AFTER INSERT OR UPDATE ON switch_journal
      FOR EACH ROW EXECUTE FUNCTION switch_journal_notify()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER switch_journal_notify ON switch_journal`.execute(db);
  await sql`DROP FUNCTION switch_journal_notify()`.execute(db);
}
