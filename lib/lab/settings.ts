/** The lab as a whole: whether it is on, and a settings change applied to this instance at once. */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { config } from "../core/config";
import { applyPoolSize } from "../core/db";
import { LabDisabled } from "../core/problems";
import type { LabSettings } from "./settings-schema";
import { getLabSettings, updateLabSettings } from "./settings-store";

export function requireLab(): void {
  if (!config.labEnabled) throw new LabDisabled();
}

/** Stores a settings change and applies the pool size to this instance at once. */
export async function changeLabSettings(db: Kysely<Database>, patch: unknown): Promise<LabSettings> {
  const settings = await updateLabSettings(db, patch);
  await applyPoolSize(settings.poolSize);
  return settings;
}

/** At start-up: this instance's pool takes the size the shared settings say. */
export async function applyStoredPoolSize(db: Kysely<Database>): Promise<void> {
  await applyPoolSize((await getLabSettings(db)).poolSize);
}
