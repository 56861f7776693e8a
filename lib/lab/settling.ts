/**
 * Whether a user's state can still change on its own, and until when: pure rules over what the audit read
 * (audit-activity.ts) and the provider's call log. A user is settled when no operation of theirs runs, none
 * of their journal entries waits for a repair, and none of their provider calls may still land.
 */
import { splitIdentityId } from "../../db/schema";
import type { ProviderCall } from "../provider-sim/lab-client";

/** Whether the state may still change on its own, and until when (ISO; null: settled, or nobody knows). */
export interface Settling {
  settled: boolean;
  settlingUntil: string | null;
}

/** A journal entry of the user that is open, or whose calls may still land. */
export interface JournalFact {
  operationId: string;
  fence: string;
  /** Not `done` nor `resolved`: a later holder (a switch, the reconciler) must settle it. */
  open: boolean;
  /** How its operation ended when it did not finish (its error); null while it runs, or after a crash. */
  endedWith: string | null;
  /** Until when a provider write of its operation may land, while the operation runs. */
  inFlightUntil: Date | null;
  /** Its operation's request has been answered (its timeline lane says so). */
  answered: boolean;
}

/** A provider write (a lane's unlink or link) whose caller got no answer, and until when it may land. */
export interface UnansweredWrite {
  operationId: string;
  phase: "unlink" | "link";
  /** The accounts the call named: the account it acted on first. */
  accounts: string[];
  /** How many requests it sent; unknown for a call that failed before it could say. */
  attempts: number | null;
  /** The provider's apply limit after the caller stopped waiting: it cannot land later. */
  until: Date;
}

/** What the audit read of one user's activity, on the database's clock at `now`. */
export interface UserActivity {
  /** The user's lease while it is held: its holder's fence and its expiry. */
  lease: { fence: string; until: Date } | null;
  journal: JournalFact[];
  /** Unanswered requests with no lease or journal to bound them (another strategy, or not yet acquired). */
  unboundedRequests: number;
  unansweredWrites: UnansweredWrite[];
}

/**
 * Pure: what may still change the user's state, each as until when (null: nobody knows):
 * - the lease while held (its holder runs; renewals move its expiry);
 * - an open journal entry whose operation no longer runs (answered, ended, or its lease gone): it waits
 *   for a repair, by the next switch or the reconciler, and nobody knows when that comes;
 * - the journal's `in_flight_until` while its operation runs;
 * - an unanswered request nothing bounds;
 * - a write whose caller got no answer, until its bound, unless the provider's log has each of its
 *   requests: the provider logs a call once it is done with it (applied, refused or dropped), so a
 *   logged call can no longer land.
 */
export function pendingOf(activity: UserActivity, calls: ProviderCall[], now: Date): (Date | null)[] {
  const pending: (Date | null)[] = [];
  const { lease } = activity;
  if (lease) pending.push(lease.until);
  for (const entry of activity.journal) {
    const runs = !entry.answered && entry.endedWith === null && lease?.fence === entry.fence;
    if (entry.open && !runs) pending.push(null);
    if (!entry.answered && entry.inFlightUntil && entry.inFlightUntil > now) pending.push(entry.inFlightUntil);
  }
  if (activity.unboundedRequests > 0) pending.push(null);
  for (const write of activity.unansweredWrites)
    if (write.until > now && !allLogged(write, calls)) pending.push(write.until);
  return pending;
}

/** Pure: whether the provider's log lists every request of `write` (then none of them can land any more). */
export function allLogged(write: UnansweredWrite, calls: ProviderCall[]): boolean {
  if (write.attempts === null) return false;
  const { method, path } = requestOf(write);
  const logged = calls.filter(
    (call) => call.operationId === write.operationId && call.method === method && call.path === path,
  ).length;
  return logged >= write.attempts;
}

/** The request a write phase sent, as the provider's log names it (its path decoded). */
function requestOf({ phase, accounts }: UnansweredWrite): { method: string; path: string } {
  const [primaryId, otherId] = accounts;
  if (phase === "link") return { method: "POST", path: `/api/v2/users/${primaryId}/identities` };
  const { provider, providerUserId } = splitIdentityId(otherId ?? "");
  return { method: "DELETE", path: `/api/v2/users/${primaryId}/identities/${provider}/${providerUserId}` };
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
