/**
 * The operation: promote one of a user's linked identities to primary. At the provider that is two
 * non-atomic calls (unlink the target from the current primary, then link the old primary under the
 * target), so concurrent runs for one user must be kept apart. The steps are written once; a strategy
 * (see `lib/strategies.ts`) only decides how they are guarded.
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema";
import { shortId } from "./events";
import { ProviderCallError, type IdentityProviderClient, type ProviderAccount, type ProviderCallContext } from "./identity-provider";
import { getLabSettings } from "./lab-settings";
import {
  FencedOff,
  IdentityNotLinked,
  LeaseLost,
  ProviderDeadlineExceeded,
  ProviderStepFailed,
  RecoveryFailed,
  UserNotFound,
  type Problem,
  type ProviderStep,
} from "./problems";
import { withIdempotencyKey, type StoredAnswer } from "./idempotency";
import { guards, maxHoldMs, type GuardedSection } from "./strategies";
import type { JournalEntry } from "./switch-journal";
import { findIdentityOf, findUser } from "./users";

export interface PromoteRequest {
  userId: string;
  identityId: string;
  /** Given by callers that must know the id before the answer (idempotent requests). */
  operationId?: string;
}

export interface PromoteResult {
  primaryIdentityId: string;
  changed: boolean;
  operationId: string;
}

export async function promoteToPrimary(db: Kysely<Database>, provider: IdentityProviderClient, request: PromoteRequest): Promise<PromoteResult> {
  const { userId, identityId } = request;
  const settings = await getLabSettings(db);
  if (!(await findIdentityOf(db, userId, identityId))) {
    throw (await findUser(db, userId)) ? new IdentityNotLinked(identityId, userId) : new UserNotFound(userId);
  }

  const operationId = request.operationId ?? randomUUID();
  const guard = guards[settings.strategy];
  const outcome = await guard.run({ db, userId, operationId, targetIdentityId: identityId, settings }, async (section) => {
    const context: ProviderCallContext = { operationId, deadline: section.deadline, fence: section.fence };
    // Whatever an earlier holder left half-done is settled first, against what the provider says.
    for (const entry of section.leftovers) await recoverSwitch(section, provider, context, entry);

    // Read inside the guarded section: state read before it may already be stale.
    const user = await findUser(section.db, userId);
    if (!user) throw new UserNotFound(userId);
    await section.reached("acquired", user.primaryIdentityId);
    if (user.primaryIdentityId === identityId) return { primaryIdentityId: identityId, changed: false };

    await providerStep(section, "unlink", () => provider.unlinkIdentity(user.primaryIdentityId, identityId, context));
    await section.reached("unlinked");
    await providerStep(section, "link", () => linkTolerant(provider, identityId, user.primaryIdentityId, context));
    await section.reached("linked");
    await section.savePrimary(user, identityId);
    await section.reached("saved");
    return { primaryIdentityId: identityId, changed: true };
  });
  return { ...outcome, operationId };
}

/** A link whose earlier attempt may have landed: "already exists" means the identity is where we want it. */
async function linkTolerant(provider: IdentityProviderClient, primaryId: string, secondaryId: string, context: ProviderCallContext): Promise<void> {
  try {
    await provider.linkAccount(primaryId, secondaryId, context);
  } catch (error) {
    if (error instanceof ProviderCallError && error.status === 409 && error.errorCode === "identity_conflict") return;
    throw error;
  }
}

async function providerStep(section: GuardedSection, step: ProviderStep, call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    throw problemFor(section, step, error, () =>
      error.kind === "deadline" ? new ProviderDeadlineExceeded(step) : new ProviderStepFailed(step, error.status, error.message),
    );
  }
}

/** A provider failure as the operation's problem: a lost lease, a fenced call, or what the step makes of it. */
function problemFor(section: GuardedSection, step: ProviderStep | "recover", error: ProviderCallError, otherwise: () => Problem): Problem {
  if (error.kind === "deadline" && section.deadline.firedBecause === "lease lost") return new LeaseLost(step);
  if (error.errorCode === "fenced_token") return new FencedOff(step, error.message);
  return otherwise();
}

/**
 * Settles one switch an earlier holder left unfinished (after a crash, a timeout, a late answer): reads
 * both accounts at the provider, then finishes the switch where it got past the unlink, and records
 * the local primary the provider now has.
 */
async function recoverSwitch(section: GuardedSection, provider: IdentityProviderClient, context: ProviderCallContext, entry: JournalEntry): Promise<void> {
  const { fromIdentityId: from, toIdentityId: to } = entry;
  const leftBy = entry.endedWith === null ? "left by a crash" : `left by operation ${shortId(entry.operationId)} (${entry.endedWith})`;
  const recovered = (action: string) => section.markRecovered(entry, `Recovered switch from ${from} to ${to} ${leftBy}: ${action}.`);
  // Saved (or never meant to change anything): the journal alone says it is complete.
  if (entry.step === "saved" || from === to) return recovered("it had already finished");
  try {
    const [fromAccount, toAccount] = [await accountOrNull(provider, from, context), await accountOrNull(provider, to, context)];
    if (holds(toAccount, from)) {
      await saveRecoveredPrimary(section, entry, to);
      return recovered("the provider had finished it; saved the new primary");
    }
    if (holds(fromAccount, to)) return recovered("the provider never changed; nothing to undo");
    if (fromAccount && toAccount) {
      await linkTolerant(provider, to, from, context);
      await saveRecoveredPrimary(section, entry, to);
      return recovered("it was unlinked but not linked; finished the link");
    }
    return recovered("the provider no longer has either account as the journal expects; left for the audit");
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    throw problemFor(section, "recover", error, () => new RecoveryFailed(`Recovering the switch from ${from} to ${to} ${leftBy} failed: ${error.message}`, error.status));
  }
}

async function accountOrNull(provider: IdentityProviderClient, accountId: string, context: ProviderCallContext): Promise<ProviderAccount | null> {
  try {
    return await provider.getUser(accountId, context);
  } catch (error) {
    if (error instanceof ProviderCallError && error.status === 404) return null;
    throw error;
  }
}

const holds = (account: ProviderAccount | null, identityId: string): boolean =>
  account?.identities.some((identity) => `${identity.provider}|${identity.user_id}` === identityId) ?? false;

async function saveRecoveredPrimary(section: GuardedSection, entry: JournalEntry, primaryIdentityId: string): Promise<void> {
  const user = await findUser(section.db, entry.userId);
  if (user && user.primaryIdentityId !== primaryIdentityId) await section.savePrimary(user, primaryIdentityId);
}

/**
 * `promoteToPrimary` under an Idempotency-Key: a repeat gets the first answer without calling the
 * provider again. A claim is stale (its request died) once no lease it could hold can still be alive.
 */
export async function promoteToPrimaryOnce(db: Kysely<Database>, provider: IdentityProviderClient, request: PromoteRequest, idempotencyKey: string): Promise<StoredAnswer> {
  const staleAfterMs = 2 * maxHoldMs((await getLabSettings(db)).leaseTtlMs);
  return withIdempotencyKey(db, { userId: request.userId, key: idempotencyKey, request: { identityId: request.identityId }, staleAfterMs }, (operationId) =>
    promoteToPrimary(db, provider, { ...request, operationId }),
  );
}
