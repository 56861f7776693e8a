/** The lab as a whole: whether it is on, and a settings change applied to this instance at once. */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { config } from "../core/config";
import { applyPoolSize } from "../core/db";
import { subscribe } from "../core/notifications";
import { LabDisabled } from "../core/problems";
import { wakeReconciler } from "../switch/reconciler";
import type { LabSettings } from "./settings-schema";
import {
  announcementFrom,
  getLabSettings,
  labSettingsChannel,
  updateLabSettings,
  type Announcement,
} from "./settings-store";

export function requireLab(): void {
  if (!config.labEnabled) throw new LabDisabled();
}

/** Stores a settings change and applies the pool size to this instance at once. */
export async function changeLabSettings(db: Kysely<Database>, patch: unknown): Promise<LabSettings> {
  const announced = await updateLabSettings(db, patch);
  await applyAnnounced(announced);
  return announced.settings;
}

// The newest announcement this process applied (one per process, whichever bundle evaluates this module).
const applied = globalThis as typeof globalThis & { __leaseLockLabSettingsRevision?: bigint };

/**
 * Applies announced settings to this instance (its pool size, its reconciler), unless a newer announcement was applied
 * already: a change applied at once by the instance that made it is not undone by an older one arriving late.
 */
export async function applyAnnounced({ settings, revision }: Announcement): Promise<void> {
  if (revision <= (applied.__leaseLockLabSettingsRevision ?? -1n)) return;
  applied.__leaseLockLabSettingsRevision = revision;
  // The reconciler's policy follows the settings (its strategy, `reconcileAfterMs`): a round now, under them.
  wakeReconciler();
  await applyPoolSize(settings.poolSize);
}

/**
 * From start-up on: this instance's pool takes the size the shared settings say, when it starts listening
 * (and again after a lost connection, for what it missed) and whenever any instance changes them.
 */
export function followLabSettings(db: Kysely<Database>): void {
  const applyLogged = (applying: Promise<void>) =>
    applying.catch((error: unknown) => console.error("[lab] could not apply the lab settings:", error));
  subscribe(labSettingsChannel, {
    onMessage: (payload) => void applyLogged(applyAnnounced(announcementFrom(payload))),
    onConnect: () => void applyLogged(getLabSettings(db).then((settings) => applyPoolSize(settings.poolSize))),
  });
}
