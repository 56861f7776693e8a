/** The lab as a whole: whether it is on, and a settings change applied to this instance at once. */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { config } from "../core/config";
import { applyPoolSize } from "../core/db";
import { LabDisabled } from "../core/problems";
import { wakeReconciler } from "../switch/reconciler";
import { inForceEverywhere } from "./peer-settings";
import type { LabSettings } from "./settings-schema";
import { hearLabSettings, takeAnnouncement } from "./settings-snapshot";
import { updateLabSettings, type Announcement } from "./settings-store";
import { outsideExperimentRuns } from "./run-lock";

export function requireLab(): void {
  if (!config.labEnabled) throw new LabDisabled();
}

/** Stores a settings change and applies the pool size to this instance at once. */
export async function changeLabSettings(db: Kysely<Database>, patch: unknown): Promise<LabSettings> {
  const announced = await updateLabSettings(db, patch);
  await applyAnnounced(announced);
  return announced.settings;
}

/** A change asked for from outside an experiment (`PUT /api/lab`): refused while one runs (run-lock.ts). */
export async function changeLabSettingsOutsideRuns(db: Kysely<Database>, patch: unknown): Promise<LabSettings> {
  return outsideExperimentRuns(() => changeLabSettings(db, patch));
}

/**
 * Applies announced settings to this instance (its pool size, its reconciler), unless a newer announcement was
 * applied already (settings-snapshot.ts), then waits for the peer instances and the provider to run them too
 * (peer-settings.ts).
 */
export async function applyAnnounced(announcement: Announcement): Promise<void> {
  if (takeAnnouncement(announcement)) await applyToInstance(announcement.settings);
  await inForceEverywhere(announcement);
}

async function applyToInstance(settings: LabSettings): Promise<void> {
  // The reconciler's policy follows the settings (its strategy, `reconcileAfterMs`): a round now, under them.
  wakeReconciler();
  await applyPoolSize(settings.poolSize);
}

/**
 * From start-up on: this instance hears the shared settings, and its pool takes the size they say when it
 * starts listening (and again after a lost connection, for what it missed) and whenever any instance changes them.
 */
export function followLabSettings(db: Kysely<Database>): void {
  hearLabSettings(
    db,
    (settings) =>
      void applyToInstance(settings).catch((error: unknown) =>
        console.error("[lab] could not apply the lab settings:", error),
      ),
  );
}
