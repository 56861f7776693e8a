/**
 * The operation: promote one of a user's linked identities to primary. At the provider that is two
 * non-atomic calls (unlink the target from the current primary, then link the old primary under the
 * target), so concurrent runs for one user must be kept apart. The steps are written once; a guard
 * (lease-guard.ts, or any other `Guard`) only decides how they are kept apart.
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { UserNotFound } from "../core/problems";
import {
  ProviderCallError,
  type IdentityProviderClient,
  type ProviderAccount,
  type ProviderCallContext,
} from "../provider/client";
import { defaultMaxHoldMs } from "@lease-lock-lab/lease";
import { shortId } from "./events";
import { recoveryLink, type Guard, type GuardedSection } from "./guard";
import { withIdempotencyKey } from "./idempotency";
import type { JournalEntry } from "./journal";
import { linkTolerant, providerStep, recoveryProblem } from "./provider-steps";
import { allOf, identityOfUser, requireNow, type Requirement } from "./guard";
import { findUser } from "./users";

export interface PromoteRequest {
  userId: string;
  identityId: string;
  /** Given by callers that must know the id before the answer (idempotent requests). */
  operationId?: string;
  /** What the caller requires besides (its session is this user's): checked with the switch's own. */
  requires?: Requirement;
}

export interface PromoteResult {
  primaryIdentityId: string;
  changed: boolean;
  operationId: string;
}

export async function promoteToPrimary(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  guard: Guard,
  request: PromoteRequest,
): Promise<PromoteResult> {
  const { userId, identityId } = request;
  // The caller's requirement first: an unsigned request learns nothing of the user's identities.
  const requires = allOf([...(request.requires ? [request.requires] : []), identityOfUser(userId, identityId)]);
  if (!guard.checksRequirements) await requireNow(db, requires);

  const operationId = request.operationId ?? randomUUID();
  const guarded = { db, userId, operationId, targetIdentityId: identityId, requires };
  const outcome = await guard.run(guarded, async (section) => {
    const context = callContext(operationId, section);
    // Whatever an earlier holder left half-done is settled first, against what the provider says.
    for (const entry of section.leftovers) await recoverSwitch(section, provider, context, entry);

    // Read inside the guarded section: state read before it may already be stale.
    const user = section.acquiredUser ?? (await findUser(section.db, userId));
    if (!user) throw new UserNotFound(userId);
    await section.reached("acquired", user.primaryIdentityId);
    if (user.primaryIdentityId === identityId) return { primaryIdentityId: identityId, changed: false };

    await providerStep(section, "unlink", () => provider.unlinkIdentity(user.primaryIdentityId, identityId, context));
    await section.reached("unlinked");
    await providerStep(section, "link", () => linkTolerant(provider, identityId, user.primaryIdentityId, context));
    await section.reached("linked");
    await section.savePrimary(identityId, { finishing: true });
    return { primaryIdentityId: identityId, changed: true };
  });
  return { ...outcome, operationId };
}

/**
 * Settles what earlier operations left half-done for `userId`, under the guard like any switch, and
 * switches nothing itself: what the background reconciler runs.
 */
export async function settleLeftovers(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  guard: Guard,
  userId: string,
): Promise<{ operationId: string; settled: number }> {
  const operationId = randomUUID();
  const settled = await guard.run({ db, userId, operationId, targetIdentityId: null }, async (section) => {
    const context = callContext(operationId, section);
    for (const entry of section.leftovers) await recoverSwitch(section, provider, context, entry);
    return section.leftovers.length;
  });
  return { operationId, settled };
}

/** What every provider call of the section carries: its deadline, and the lease's fence and generation. */
const callContext = (operationId: string, section: GuardedSection): ProviderCallContext => ({
  operationId,
  deadline: section.deadline,
  fence: section.fence,
  generation: section.generation,
});

/**
 * `promoteToPrimary` under an Idempotency-Key: a repeat gets the first answer without calling the
 * provider again. A claim is stale (its request died) after `staleAfterMs`, when no lease it could
 * hold can still be alive.
 */
export function promoteToPrimaryOnce(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  guard: Guard,
  request: PromoteRequest & { idempotencyKey: string; staleAfterMs: number },
): Promise<PromoteResult> {
  const scope = {
    userId: request.userId,
    key: request.idempotencyKey,
    request: { identityId: request.identityId },
    staleAfterMs: request.staleAfterMs,
    mayLearn: async () => {
      if (request.requires) await requireNow(db, request.requires);
    },
  };
  return withIdempotencyKey(db, scope, (operationId) =>
    promoteToPrimary(db, provider, guard, { ...request, operationId }),
  );
}

/**
 * A switch as the route takes it: under its Idempotency-Key when it has one. A key's claim is stale once no
 * lease its request could hold (renewals included) can still be alive.
 */
export function promoteRequest(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  guard: Guard,
  request: PromoteRequest,
  { idempotencyKey, leaseTtlMs }: { idempotencyKey: string | undefined; leaseTtlMs: number },
): Promise<PromoteResult> {
  if (idempotencyKey === undefined) return promoteToPrimary(db, provider, guard, request);
  const staleAfterMs = 2 * defaultMaxHoldMs(leaseTtlMs);
  return promoteToPrimaryOnce(db, provider, guard, { ...request, idempotencyKey, staleAfterMs });
}

/**
 * Settling a switch an earlier holder left unfinished (after a crash, a timeout, a late answer): read
 * both accounts at the provider, finish the switch where it got past the unlink, and record the local
 * primary the provider now has.
 */
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
