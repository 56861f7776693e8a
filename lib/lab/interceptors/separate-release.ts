/**
 * The switch's last write without the release, for the lab's faults that act between the two: a release that
 * fails (`releaseFailures`), a pause after the save (`stall.at: "saved"`). The product saves and releases in
 * one statement; with these faults armed, the lab sends the release on its own after the save, as before.
 */
import { doneWith, type SwitchJournal } from "../../switch/journal";
import { primaryChange } from "../../switch/users";

export function separateRelease(journal: SwitchJournal): SwitchJournal {
  return {
    ...journal,
    saveAndFinish: async (db, id, lease, primaryIdentityId) => ({
      saved: await doneWith(db, id, lease.updating(primaryChange(primaryIdentityId))),
      released: false,
    }),
    finishAndRelease: async (db, id, lease) => {
      await journal.advance(db, id, lease, "done");
      return false;
    },
  };
}
