import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { seedAppData } from "../../db/seed";
import { resetProvider } from "../provider-sim/lab-client";
import { applyAnnounced } from "./settings";
import { defaultLabSettings } from "./settings-schema";
import { replaceLabSettings } from "./settings-store";
import { announceReset } from "./stream";
import { outsideExperimentRuns } from "./run-lock";

/** Everything back to the seed: users, identities, leases, settings, provider state and its call log. */
export async function resetLab(db: Kysely<Database>): Promise<void> {
  await seedAppData(db);
  const announced = await replaceLabSettings(db, defaultLabSettings);
  await resetProvider();
  await applyAnnounced(announced);
  await announceReset(db);
}

/** A reset asked for from outside an experiment (`POST /api/lab/reset`): refused while one runs (run-lock.ts). */
export async function resetLabOutsideRuns(db: Kysely<Database>): Promise<void> {
  await outsideExperimentRuns(() => resetLab(db));
}
