/**
 * The audit: does the provider agree with the app? For each local user, all of the user's identities
 * must sit in exactly one provider account, whose primary identity is the user's local primary.
 *
 * And can that answer still change on its own? A user is settled when none of the user's operations runs,
 * none of their journal entries waits for a repair, and none of their provider calls may still land
 * (settling.ts). Until then the audit says until when it may change (`settlingUntil`), or that nobody knows
 * (null): a switch half-way through is not corruption.
 */
import type { Kysely } from "kysely";
import { splitIdentityId, type Database } from "../../db/schema";
import type { ProviderAccount } from "../provider/client";
import { fetchProviderAccounts, type ProviderCall } from "../provider-sim/lab-client";
import { readActivity } from "./audit-activity";
import { labSettings } from "./settings-snapshot";
import { pendingOf, settlingOf, settlingOfAll, type Settling } from "./settling";

export type { Settling } from "./settling";

/** A violation, the identities it is about, and the operations whose provider calls touched them. */
export interface Finding {
  violation: string;
  identityIds: string[];
  operationIds: string[];
}

export interface UserAudit extends Settling {
  userId: string;
  consistent: boolean;
  localPrimaryIdentityId: string;
  providerPrimaryIdentityId: string | null;
  violations: string[];
  findings: Finding[];
}

export interface AuditReport extends Settling {
  consistent: boolean;
  users: UserAudit[];
}

/** How many times at most the audit reads, when an operation moved while it read and none runs now. */
const readAttempts = 3;

export async function auditConsistency(db: Kysely<Database>): Promise<AuditReport> {
  const { applyLimitMs } = (await labSettings(db)).provider;
  let before = await readActivity(db, applyLimitMs);
  for (let attempt = 1; ; attempt++) {
    const [users, identities, { accounts, calls }] = await Promise.all([
      db.selectFrom("users").select(["id", "primary_identity_id"]).orderBy("id").execute(),
      db.selectFrom("identities").select(["id", "user_id"]).orderBy("position").execute(),
      fetchProviderAccounts(),
    ]);
    const after = await readActivity(db, applyLimitMs);
    let raced = false;
    const audits = users.map((user) => {
      const identityIds = identities.filter((identity) => identity.user_id === user.id).map((identity) => identity.id);
      const audit = auditUser(user.id, user.primary_identity_id, identityIds, accounts, calls);
      const activity = after.users.get(user.id);
      const pending = activity ? pendingOf(activity, calls, after.now) : [];
      // Something of this user changed while the state was read, and nothing runs now: the state read may
      // mix before and after. Read again; if it keeps moving, say that nobody knows.
      const moved = before.users.get(user.id)?.fingerprint !== activity?.fingerprint;
      if (moved && pending.length === 0) {
        raced = true;
        pending.push(null);
      }
      return { ...audit, ...settlingOf(pending) };
    });
    if (!raced || attempt === readAttempts) {
      return { consistent: audits.every((audit) => audit.consistent), ...settlingOfAll(audits), users: audits };
    }
    before = after;
  }
}

/** Pure: compares one user's local view with the provider's accounts and names each difference. */
export function auditUser(
  userId: string,
  localPrimary: string,
  identityIds: string[],
  accounts: ProviderAccount[],
  calls: ProviderCall[] = [],
): Omit<UserAudit, keyof Settling> {
  const accountOf = new Map<string, string>();
  for (const account of accounts) {
    for (const identityId of account.identityIds) accountOf.set(identityId, account.accountId);
  }
  const found: { violation: string; identityIds: string[] }[] = [];
  const violate = (violation: string, ...about: string[]) => found.push({ violation, identityIds: about });
  const holders = new Map<string, string[]>();
  for (const identityId of identityIds) {
    const accountId = accountOf.get(identityId);
    if (!accountId) {
      violate(`${identityId} is missing at the provider`, identityId);
      continue;
    }
    holders.set(accountId, [...(holders.get(accountId) ?? []), identityId]);
  }

  // The user's main account at the provider: the one holding most of the user's identities.
  const main = [...holders.entries()].sort(
    ([a, aIds], [b, bIds]) => bIds.length - aIds.length || Number(b === localPrimary) - Number(a === localPrimary),
  )[0];
  const providerPrimary = main?.[0] ?? null;
  if (providerPrimary && providerPrimary !== localPrimary) {
    violate(`provider primary is ${providerPrimary}, local primary is ${localPrimary}`, providerPrimary, localPrimary);
  }
  for (const [accountId, held] of holders) {
    if (accountId === providerPrimary) continue;
    violate(
      held.length === 1 && held[0] === accountId
        ? `${accountId} is orphaned in its own account`
        : `${held.join(", ")} sit apart in account ${accountId}`,
      ...held,
    );
  }
  const own = new Set(identityIds);
  const mainAccount = accounts.find((account) => account.accountId === providerPrimary);
  for (const id of mainAccount?.identityIds ?? []) {
    if (!own.has(id)) violate(`${id}, not ${userId}'s, is linked under ${providerPrimary}`, id);
  }
  const findings = found.map((finding) => ({
    ...finding,
    operationIds: operationsTouching(finding.identityIds, calls),
  }));
  return {
    userId,
    consistent: findings.length === 0,
    localPrimaryIdentityId: localPrimary,
    providerPrimaryIdentityId: providerPrimary,
    violations: findings.map((finding) => finding.violation),
    findings,
  };
}

/**
 * The operations (newest first) that changed these identities at the provider: a call that was applied
 * (2xx, late answers included) and named one of them in its path. Refused calls changed nothing.
 */
function operationsTouching(identityIds: string[], calls: ProviderCall[]): string[] {
  const spellings = identityIds.flatMap(pathSpellings);
  const operations = new Set<string>();
  for (const call of [...calls].reverse()) {
    const applied = call.status >= 200 && call.status < 300;
    if (applied && call.operationId && spellings.some((spelling) => `${call.path}/`.includes(spelling)))
      operations.add(call.operationId);
  }
  return [...operations];
}

/** An identity appears in a call's path as an account id (`/github|8812/`) or as `/{provider}/{providerUserId}/`. */
function pathSpellings(identityId: string): string[] {
  const { provider, providerUserId } = splitIdentityId(identityId);
  return [`/${identityId}/`, `/${provider}/${providerUserId}/`];
}
