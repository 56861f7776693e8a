/**
 * Background reconciliation: a switch left unfinished by a 502, a 504 or a crash would otherwise stay
 * half-done at the provider until that user switches again. A round looks for such switches that have been
 * quiet for `reconcileAfterMs`, whose user's lease is free and whose calls can no longer land (or the
 * provider fences); for each user it takes the lease like any switch and settles what the journal left open,
 * switching nothing itself. It gives way to the user: a 409 told the user to come back when the calls can no
 * longer land, so the reconciler waits `reconcileAfterMs` past that moment, and a round it could not finish
 * for that reason leaves no journal entry behind.
 *
 * Nothing polls at rest, and a switch that finishes wakes nobody: every instance wakes when an operation ends
 * without finishing its entry (its NOTIFY, migration 0014), and runs a round when the earliest open entry can
 * be settled, looking again every second while its user's lease is held (a release sends no notification).
 * It sweeps every 30 s besides: for an entry whose process died before it could say so, and for a
 * notification lost while its listening connection was down. With nothing half-done, that sweep is all it sends.
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { subscribe } from "../core/notifications";
import { processSingleton } from "../core/process-singleton";
import { OperationInProgress, Problem } from "../core/problems";

export interface ReconcilePolicy {
  reconcileAfterMs: number;
  providerFences: boolean;
  /** Settles `userId`'s leftovers under the lease, like any switch (`settleLeftovers`). */
  settle(userId: string): Promise<unknown>;
}

/** The least time between two rounds: a leftover whose provider still fails is tried twice a second. */
const minGapMs = 500;
/** The sweep for a notification lost while the listening connection was down. */
const sweepEveryMs = 30_000;
/** While an open entry's lease is held: it may be released at any moment, and a release sends no notification. */
const heldLookAgainMs = 1_000;
/** Past the moment an entry becomes due: the round's conditions are strict (`<`), timers are whole ms. */
const dueSlackMs = 20;

/** Settles what it can now under `policy` (null: no switch is journaled to settle); returns the users settled. */
export async function reconcileRound(db: Kysely<Database>, policy: ReconcilePolicy | null): Promise<string[]> {
  if (!policy) return [];
  const after = policy.reconcileAfterMs / 1000;
  // The open entries quiet for `after`, of users whose lease is free and whose calls can no longer land:
  // an index scan of switch_journal_open (only open entries), a few rows at most.
  const { rows } = await sql<{ user_id: string }>`
    SELECT DISTINCT u.id AS user_id
      FROM switch_journal j JOIN users u ON u.id = j.user_id
     WHERE j.step NOT IN ('done', 'resolved')
       AND j.updated_at < now() - make_interval(secs => ${after})
       AND (u.identity_action_locked_until IS NULL OR u.identity_action_locked_until < now())
       AND (j.in_flight_until IS NULL OR ${policy.providerFences}::boolean
            OR j.in_flight_until < now() - make_interval(secs => ${after}))`.execute(db);
  const settled: string[] = [];
  for (const { user_id: userId } of rows) {
    try {
      await policy.settle(userId);
      settled.push(userId);
    } catch (error) {
      // Someone switched meanwhile, or the provider failed again: the next round tries again.
      if (!(error instanceof Problem)) console.error(`[reconciler] settling ${userId} failed:`, error);
      else if (!(error instanceof OperationInProgress))
        console.warn(`[reconciler] settling ${userId}: ${error.detail}`);
    }
  }
  return settled;
}

/**
 * In how many ms the earliest open entry meets the round's conditions (≤ 0: now), or null when no entry is
 * open: the same conditions as the round's, as a moment. A held lease counts until its expiry, but may be
 * released before it: then the entry is looked at again in a second. The same index scan.
 */
async function nextDueInMs(db: Kysely<Database>, policy: ReconcilePolicy): Promise<number | null> {
  const after = policy.reconcileAfterMs / 1000;
  const { rows } = await sql<{ due_in_ms: number | null }>`
    SELECT (extract(epoch FROM min(least(
              greatest(
                j.updated_at + make_interval(secs => ${after}),
                coalesce(u.identity_action_locked_until, '-infinity'::timestamptz),
                CASE WHEN ${policy.providerFences}::boolean OR j.in_flight_until IS NULL THEN '-infinity'::timestamptz
                     ELSE j.in_flight_until + make_interval(secs => ${after}) END),
              CASE WHEN u.identity_action_locked_until > now() THEN now() + make_interval(secs => ${heldLookAgainMs / 1000})
                   ELSE 'infinity'::timestamptz END)) - now()) * 1000)::float8 AS due_in_ms
      FROM switch_journal j JOIN users u ON u.id = j.user_id
     WHERE j.step NOT IN ('done', 'resolved')`.execute(db);
  return rows[0]?.due_in_ms ?? null;
}

interface Reconciler {
  timer: NodeJS.Timeout | null;
  dueAt: number;
  running: boolean;
  again: boolean;
  wake(): void;
}

/** This process's reconciler, once started. */
const reconciler = processSingleton<{ started: Reconciler | null }>("Reconciler", () => ({ started: null }));

/**
 * Runs rounds in this process under the policy `policyNow()` gives at each (null: none to run), one at a
 * time: when the journal changes, when its earliest open entry is due, and every 30 s.
 */
export function startReconciler(db: Kysely<Database>, policyNow: () => Promise<ReconcilePolicy | null>): void {
  if (reconciler.started) return;
  const state: Reconciler = { timer: null, dueAt: Infinity, running: false, again: false, wake: () => runIn(0) };
  reconciler.started = state;

  function runIn(ms: number): void {
    const at = Date.now() + ms;
    if (state.timer && state.dueAt <= at) return;
    if (state.timer) clearTimeout(state.timer);
    state.dueAt = at;
    state.timer = setTimeout(() => void round(), ms);
    state.timer.unref();
  }

  async function round(): Promise<void> {
    state.timer = null;
    state.dueAt = Infinity;
    if (state.running) {
      state.again = true;
      return;
    }
    state.running = true;
    let nextInMs = sweepEveryMs;
    try {
      const policy = await policyNow();
      await reconcileRound(db, policy);
      const due = policy && (await nextDueInMs(db, policy));
      if (due !== null) nextInMs = Math.min(sweepEveryMs, Math.max(minGapMs, due + dueSlackMs));
    } catch (error) {
      console.error("[reconciler] round failed:", error);
      nextInMs = minGapMs;
    } finally {
      state.running = false;
    }
    if (state.again) {
      state.again = false;
      nextInMs = minGapMs;
    }
    runIn(nextInMs);
  }

  subscribe("switch_journal", {
    // An entry left unfinished: the round after it finds when the entry is due. The reconciler's own entries
    // come back here too, so rounds stay `minGapMs` apart.
    onMessage: () => runIn(minGapMs),
    // Notifications sent while the listening connection was down are lost: a round finds their entries.
    onConnect: () => runIn(0),
  });
  runIn(0);
}

/** A round soon in this process (its policy changed): no-op before the start. */
export function wakeReconciler(): void {
  reconciler.started?.wake();
}
