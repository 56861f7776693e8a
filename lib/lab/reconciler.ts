/**
 * The reconciler as the lab runs it: under the lab's settings (only the lease with its safeguards journals
 * its switches; `reconcileAfterMs` null turns it off), each user it settles a lane of the timeline like
 * any switch's (with no target).
 */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import type { IdentityProviderClient } from "../provider/client";
import type { ReconcilePolicy } from "../switch/reconciler";
import { settleLeftovers } from "../switch/switch-primary";
import { labSettings } from "./settings-snapshot";
import { labLeaseGuard } from "./strategies";
import { answerOf, startRecording } from "./lane-recorder";
import { recordedGuard, recordingProvider } from "./interceptors/recorded";

export async function labReconcilePolicy(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
): Promise<ReconcilePolicy | null> {
  const settings = await labSettings(db);
  // Only the lease journals its switches; the textbook lease (safeguards off) is shown as it is.
  if (settings.strategy !== "lease" || !settings.leaseSafeguards || settings.reconcileAfterMs === null) return null;
  return {
    reconcileAfterMs: settings.reconcileAfterMs,
    providerFences: settings.provider.enforceFencing,
    async settle(userId) {
      const recorder = await startRecording({ userId, toIdentityId: null, strategy: "lease" });
      const guard = recordedGuard(labLeaseGuard(settings, { recorder }), recorder, true);
      try {
        await settleLeftovers(db, recordingProvider(provider, recorder), guard, userId);
        await recorder.answer(200, null);
      } catch (error) {
        const { status, problemType } = answerOf(error);
        await recorder.answer(status, problemType);
        throw error;
      }
    },
  };
}
