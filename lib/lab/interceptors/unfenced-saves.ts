/**
 * The lab's wrong saves (fault `unfencedSave`, and the textbook lease): the switch's saves sent without
 * the lease's condition, as a save that trusts the checks made before it does. A holder paused after its
 * last check then overwrites the holder after it.
 */
import { sql } from "kysely";
import type { SwitchJournal } from "../../switch/journal";
import { savePrimary } from "../../switch/users";

export function unfencedSaves(journal: SwitchJournal): SwitchJournal {
  return {
    ...journal,
    async saveAndFinish(db, id, lease, primaryIdentityId) {
      await savePrimary(db, String(lease.rowId), primaryIdentityId);
      await db
        .updateTable("switch_journal")
        .set({ step: "done", updated_at: sql`now()`, in_flight_until: sql`NULL` })
        .where("id", "=", id)
        .where("step", "<>", "resolved")
        .execute();
      // The lease is left for the release at the end.
      return { saved: true, released: false };
    },
    savePrimary: (db, lease, primaryIdentityId) => savePrimary(db, String(lease.rowId), primaryIdentityId),
  };
}
