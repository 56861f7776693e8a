/**
 * Background reconciliation: a switch left unfinished by a 502, a 504 or a crash would otherwise stay
 * half-done at the provider until that user switches again. Every instance looks twice a second for such
 * switches that have been quiet for `reconcileAfterMs`, whose user's lease is free and whose calls can no
 * longer land (or the provider fences); for each user it takes the lease like any switch and settles what
 * the journal left open, switching nothing itself. It gives way to the user: a 409 told the user to come
 * back when the calls can no longer land, so the reconciler waits `reconcileAfterMs` past that moment,
 * and a round it could not finish for that reason leaves no journal entry behind.
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { OperationInProgress, Problem } from "../core/problems";
import type { IdentityProviderClient } from "../provider/client";
import { settleLeftovers } from "../switch/switch-primary";
import { getLabSettings } from "./settings-store";
import { leaseGuardFor } from "./strategies";
import { answerOf, startRecording } from "./lane-recorder";
import { recordedGuard, recordingProvider } from "./recorded";

/** Settles what it can now; returns the users it settled. */
export async function reconcileOnce(db: Kysely<Database>, provider: IdentityProviderClient): Promise<string[]> {
  const settings = await getLabSettings(db);
  // Only the lease journals its switches; the textbook lease (safeguards off) is shown as it is.
  if (settings.strategy !== "lease" || !settings.leaseSafeguards || settings.reconcileAfterMs === null) return [];
  const fences = settings.provider.enforceFencing;
  const { rows } = await sql<{ user_id: string }>`
    SELECT DISTINCT u.id AS user_id
      FROM switch_journal j JOIN users u ON u.id = j.user_id
     WHERE j.step NOT IN ('done', 'resolved')
       AND j.updated_at < now() - make_interval(secs => ${settings.reconcileAfterMs / 1000})
       AND (u.identity_action_locked_until IS NULL OR u.identity_action_locked_until < now())
       AND (j.in_flight_until IS NULL OR ${fences}::boolean
            OR j.in_flight_until < now() - make_interval(secs => ${settings.reconcileAfterMs / 1000}))`.execute(db);
  const settled: string[] = [];
  for (const { user_id: userId } of rows) {
    // Its operation is a lane of the timeline like any switch's (with no target).
    const recorder = await startRecording({ userId, toIdentityId: null, strategy: "lease" });
    const guard = recordedGuard(leaseGuardFor(settings, undefined, recorder), recorder, true);
    try {
      await settleLeftovers(db, recordingProvider(provider, recorder), guard, userId);
      await recorder.answer(200, null);
      settled.push(userId);
    } catch (error) {
      const { status, problemType } = answerOf(error);
      await recorder.answer(status, problemType);
      // Someone switched meanwhile, or the provider failed again: the next round tries again.
      if (!(error instanceof Problem)) console.error(`[reconciler] settling ${userId} failed:`, error);
      else if (!(error instanceof OperationInProgress))
        console.warn(`[reconciler] settling ${userId}: ${error.detail}`);
    }
  }
  return settled;
}

/** Runs `reconcileOnce` every `everyMs` in this process, one round at a time. */
export function startReconciler(db: Kysely<Database>, provider: IdentityProviderClient, everyMs = 500): void {
  const round = async () => {
    await reconcileOnce(db, provider).catch((error: unknown) => console.error("[reconciler] round failed:", error));
    setTimeout(() => void round(), everyMs).unref();
  };
  setTimeout(() => void round(), everyMs).unref();
}
