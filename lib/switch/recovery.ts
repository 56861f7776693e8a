/**
 * Settling a switch an earlier holder left unfinished (after a crash, a timeout, a late answer): read
 * both accounts at the provider, finish the switch where it got past the unlink, and record the local
 * primary the provider now has.
 */
import {
  ProviderCallError,
  type IdentityProviderClient,
  type ProviderAccount,
  type ProviderCallContext,
} from "../provider/client";
import { shortId } from "./events";
import type { GuardedSection } from "./guard";
import type { JournalEntry } from "./journal";
import { linkTolerant, recoveryProblem } from "./provider-steps";
import { recoveryLink } from "./steps";
import { findUser } from "./users";

export async function recoverSwitch(
  section: GuardedSection,
  provider: IdentityProviderClient,
  context: ProviderCallContext,
  entry: JournalEntry,
): Promise<void> {
  const { fromIdentityId: from, toIdentityId: to } = entry;
  // An entry that ended with no error recorded is not called a crash: its lease expired unreleased, and
  // its operation may be dead or still running without it.
  const endedWith = entry.endedWith ?? "its lease expired before it finished";
  const leftBy = `left by operation ${shortId(entry.operationId)} (${endedWith})`;
  const recovered = (action: string) =>
    section.markRecovered(entry, `Recovered switch from ${from} to ${to} ${leftBy}: ${action}.`);
  // Saved (entries from before `done` followed the save directly) or never meant to change anything: the
  // journal alone says it is complete.
  if (entry.step === "saved" || from === to) return recovered("it had already finished");
  await section.settleInFlight(entry);
  try {
    const [fromAccount, toAccount] = [
      await accountOrNull(provider, from, context),
      await accountOrNull(provider, to, context),
    ];
    if (holds(toAccount, from)) {
      await saveRecoveredPrimary(section, entry, to);
      return recovered("the provider had finished it; saved the new primary");
    }
    if (holds(fromAccount, to)) return recovered("the provider never changed; nothing to undo");
    if (fromAccount && toAccount) {
      // A write like the switch's own: only while the lease is still mine (the read took time).
      await section.ensureHeld(recoveryLink);
      await linkTolerant(provider, to, from, context);
      await saveRecoveredPrimary(section, entry, to);
      return recovered("it was unlinked but not linked; finished the link");
    }
    return recovered("the provider no longer has either account as the journal expects; left for the audit");
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    if (error.mayHaveLanded) section.callMayStillLand();
    throw recoveryProblem(error, section.deadline, `Recovering the switch from ${from} to ${to} ${leftBy}`);
  }
}

async function accountOrNull(
  provider: IdentityProviderClient,
  accountId: string,
  context: ProviderCallContext,
): Promise<ProviderAccount | null> {
  try {
    return await provider.getAccount(accountId, context);
  } catch (error) {
    if (error instanceof ProviderCallError && error.status === 404) return null;
    throw error;
  }
}

const holds = (account: ProviderAccount | null, identityId: string): boolean =>
  account?.identityIds.includes(identityId) ?? false;

/** Saves the primary the provider has, through the guard's save (under the lease, owner-checked). */
async function saveRecoveredPrimary(
  section: GuardedSection,
  entry: JournalEntry,
  primaryIdentityId: string,
): Promise<void> {
  const user = await findUser(section.db, entry.userId);
  if (user && user.primaryIdentityId !== primaryIdentityId) await section.savePrimary(primaryIdentityId);
}
