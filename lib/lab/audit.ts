/**
 * The audit: does the provider agree with the app? For each local user, all of the user's identities
 * must sit in exactly one provider account, whose primary identity is the user's local primary.
 *
 * And can that answer still change on its own? A user is settled when none of the user's operations runs
 * and none of their provider calls may still land. Until then the audit says until when it may change
 * (`settlingUntil`), or that nobody knows (null): a switch half-way through is not corruption.
 */
import { sql, type Kysely } from "kysely";
import { splitIdentityId, type Database } from "../../db/schema";
import type { ProviderAccount } from "../provider/client";
import { fetchProviderAccounts, type ProviderCall } from "../provider-sim/lab-client";
import { labSettings } from "./settings-snapshot";

/** A violation, the identities it is about, and the operations whose provider calls touched them. */
export interface Finding {
  violation: string;
  identityIds: string[];
  operationIds: string[];
}

/** Whether the state may still change on its own, and until when (ISO; null: settled, or nobody knows). */
export interface Settling {
  settled: boolean;
  settlingUntil: string | null;
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
      const pending = [
        ...(after.users.get(user.id)?.pending ?? []),
        ...callsThatMayLand(calls, identityIds, applyLimitMs, after.now),
      ];
      // Something of this user changed while the state was read, and nothing runs now: the state read may
      // mix before and after. Read again; if it keeps moving, say that nobody knows.
      const moved = before.users.get(user.id)?.fingerprint !== after.users.get(user.id)?.fingerprint;
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

/**
 * Pure: settled when nothing may still change the state; else until the latest moment something may
 * (each bound a Date, or null when that one is unknown, which makes the whole unknown).
 */
export function settlingOf(pending: (Date | null)[]): Settling {
  if (pending.length === 0) return { settled: true, settlingUntil: null };
  if (pending.some((until) => until === null)) return { settled: false, settlingUntil: null };
  const latest = Math.max(...pending.map((until) => until!.getTime()));
  return { settled: false, settlingUntil: new Date(latest).toISOString() };
}

/** Pure: every user settled; else until the latest user's bound (null when one of them is unknown). */
export function settlingOfAll(users: Settling[]): Settling {
  const unsettled = users.filter((user) => !user.settled);
  return settlingOf(unsettled.map((user) => (user.settlingUntil === null ? null : new Date(user.settlingUntil))));
}

/** Outcomes of a call that got no HTTP answer (the log's status 0), or whose caller left before it did. */
const unanswered = new Set(["timeout", "network-error", "client-closed"]);

/**
 * Pure: the calls in the provider's log that touched these identities and got no answer, each as the
 * moment after which it can no longer be applied. The provider applies a request within its apply
 * limit of its arrival or never; it logs a call once it is done with it, after its arrival, so the log's
 * time plus the limit is never too early.
 */
export function callsThatMayLand(
  calls: ProviderCall[],
  identityIds: string[],
  applyLimitMs: number,
  now: Date,
): Date[] {
  const spellings = identityIds.flatMap(pathSpellings);
  return calls
    .filter((call) => call.status === 0 || (call.outcome !== null && unanswered.has(call.outcome)))
    .filter((call) => spellings.some((spelling) => `${call.path}/`.includes(spelling)))
    .map((call) => new Date(Date.parse(call.at) + applyLimitMs))
    .filter((until) => until > now);
}

/** How long back an unanswered request counts as running: as far back as the page draws lanes. */
const runningLaneWindowMs = 10 * 60_000;

interface Activity {
  /** The database's clock when it was read. */
  now: Date;
  users: Map<string, { fingerprint: string; pending: (Date | null)[] }>;
}

/**
 * Per user, what may still change the state, each as until when (null: unknown), read in one statement:
 * - the lease, while held (its holder runs; renewals move its expiry);
 * - the journal's `in_flight_until`: until when a lease holder's provider write may still land, while its
 *   operation runs (once answered, its lane says which of its calls got no answer: the next rule; an
 *   operation that lost its lease may not be able to narrow its journal's bound any more);
 * - an unanswered request (the timeline's lanes) with no such bound: under any strategy but the lease,
 *   and under the lease before its acquisition answered (once it has, the lease and the journal bound it;
 *   a refused one changes nothing);
 * - a provider write whose caller got no answer (a lane's unlink or link that ended in `timeout`,
 *   `network-error`, …): until the provider's apply limit after the caller stopped waiting.
 * Plus a fingerprint of everything an operation changes, to tell whether one moved meanwhile.
 */
async function readActivity(db: Kysely<Database>, applyLimitMs: number): Promise<Activity> {
  const { rows } = await sql<{ user_id: string; now: Date; fingerprint: string; pending: (string | null)[] }>`
    WITH recent AS (
      SELECT * FROM operation_lanes
       WHERE requested_at > clock_timestamp() - make_interval(secs => ${runningLaneWindowMs / 1000})
    ), pending AS (
      SELECT id AS user_id, identity_action_locked_until AS until FROM users
       WHERE identity_action_locked_until > clock_timestamp()
      UNION ALL
      SELECT j.user_id, j.in_flight_until FROM switch_journal j
       WHERE j.in_flight_until > clock_timestamp()
         AND NOT EXISTS (SELECT 1 FROM operation_lanes l WHERE l.operation_id = j.operation_id AND l.answered_at IS NOT NULL)
      UNION ALL
      SELECT l.user_id, NULL FROM recent l
       WHERE l.answered_at IS NULL
         AND (l.strategy <> 'lease' OR NOT (
               EXISTS (SELECT 1 FROM switch_journal j WHERE j.operation_id = l.operation_id)
               OR l.phases @> '[{"name": "acquire", "outcome": "refused"}]'))
      UNION ALL
      SELECT l.user_id, landing.until FROM recent l
       CROSS JOIN LATERAL jsonb_array_elements(l.phases) AS phase
       CROSS JOIN LATERAL (SELECT (phase->>'endedAt')::timestamptz + make_interval(secs => ${applyLimitMs / 1000}) AS until) landing
       WHERE (l.answered_at IS NULL OR l.answered_at > clock_timestamp() - make_interval(secs => ${applyLimitMs / 1000}))
         AND phase->>'name' IN ('unlink', 'link') AND phase->>'outcome' !~ '^[0-9]+$' AND phase->>'outcome' <> 'fenced'
         AND landing.until > clock_timestamp()
    )
    SELECT u.id AS user_id, clock_timestamp() AS now,
           concat_ws('/', u.version, u.primary_identity_id, u.identity_action_lock_token, u.identity_action_locked_until,
             (SELECT concat_ws(',', max(j.id), max(j.updated_at)) FROM switch_journal j WHERE j.user_id = u.id),
             (SELECT concat_ws(',', max(l.requested_at), max(l.answered_at), count(*) FILTER (WHERE l.answered_at IS NULL))
                FROM recent l WHERE l.user_id = u.id)) AS fingerprint,
           coalesce((SELECT jsonb_agg(lab_iso(p.until)) FROM pending p WHERE p.user_id = u.id), '[]') AS pending
      FROM users u`.execute(db);
  return {
    now: rows[0]?.now ?? new Date(),
    users: new Map(
      rows.map((row) => [
        row.user_id,
        {
          fingerprint: row.fingerprint,
          pending: row.pending.map((until) => (until === null ? null : new Date(until))),
        },
      ]),
    ),
  };
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
