/** The lab as a whole: whether it is on, and a settings change applied to this instance at once. */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { config } from "../core/config";
import { applyPoolSize } from "../core/db";
import { subscribe } from "../core/notifications";
import { LabDisabled } from "../core/problems";
import type { LabSettings } from "./settings-schema";
import { getLabSettings, labSettingsChannel, settingsFrom, updateLabSettings } from "./settings-store";

export function requireLab(): void {
  if (!config.labEnabled) throw new LabDisabled();
}

/** Stores a settings change and applies the pool size to this instance at once. */
export async function changeLabSettings(db: Kysely<Database>, patch: unknown): Promise<LabSettings> {
  const settings = await updateLabSettings(db, patch);
  await applyPoolSize(settings.poolSize);
  return settings;
}

/**
 * From start-up on: this instance's pool takes the size the shared settings say, when it starts listening
 * (and again after a lost connection, for what it missed) and whenever any instance changes them.
 */
export function followLabSettings(db: Kysely<Database>): void {
  const applyLogged = (applying: Promise<void>) =>
    applying.catch((error: unknown) => console.error("[lab] could not apply the lab settings:", error));
  subscribe(labSettingsChannel, {
    onMessage: (payload) => void applyLogged(applyPoolSize(settingsFrom(JSON.parse(payload)).poolSize)),
    onConnect: () => void applyLogged(getLabSettings(db).then((settings) => applyPoolSize(settings.poolSize))),
  });
}
