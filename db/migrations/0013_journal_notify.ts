import { sql, type Kysely } from "kysely";

/**
 * A new switch journal entry tells every instance's reconciler (channel `switch_journal`, the user's id as
 * payload), at commit: it then follows the entry until it is closed or settled (lib/switch/reconciler.ts),
 * instead of polling for entries at rest. Only the INSERT notifies, once per switch, in the acquiring
 * statement: a transaction that notifies commits under a database-wide lock (PreCommit_Notify), so its
 * commit cannot share a WAL flush with another's, and the later steps, renewals and the close would pay
 * that 3 more times per switch for nothing the reconciler needs.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION switch_journal_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('switch_journal', NEW.user_id);
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER switch_journal_notify AFTER INSERT ON switch_journal
      FOR EACH ROW EXECUTE FUNCTION switch_journal_notify()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER switch_journal_notify ON switch_journal`.execute(db);
  await sql`DROP FUNCTION switch_journal_notify()`.execute(db);
}
