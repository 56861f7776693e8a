import { sql, type Kysely } from "kysely";

/**
 * The provider's call log notifies only while the lab is watched, as the lease's, the lanes' and the events'
 * triggers have since 0016. The simulated provider writes a call's row before its answer leaves, so with the
 * notification its commit took the database-wide notification lock through its WAL flush: a switch's two calls
 * queued behind every other call's flush, on the switch's path, watched or not, the lab off too (0016's
 * measurement: 0.34 ms of wall a commit with a NOTIFY, 0.14 without, 64 at once on a pool of 16). Gated by the
 * trigger's condition, so the notification itself stays 0018's; `lab_watched()` takes the gate's shared lock, held
 * to the commit, so an opening still sees every call that did not notify.
 *
 * A provider whose state is on a database of its own (`--replica`, `--ha`) has nobody opening that database's
 * gate: its relay (lib/lab/provider-call-relay.ts), the only one listening there, keeps it open while it runs.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER idp_calls_notify ON idp.calls`.execute(db);
  await sql`
    CREATE TRIGGER idp_calls_notify AFTER INSERT ON idp.calls
      FOR EACH ROW WHEN (lab_watched()) EXECUTE FUNCTION lab_notify_provider_call()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER idp_calls_notify ON idp.calls`.execute(db);
  await sql`
    CREATE TRIGGER idp_calls_notify AFTER INSERT ON idp.calls
      FOR EACH ROW EXECUTE FUNCTION lab_notify_provider_call()`.execute(db);
}
