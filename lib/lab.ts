import type { Kysely } from "kysely";
import type { Database } from "../db/schema";
import { seedAppData } from "../db/seed";
import { config } from "./config";
import { LabDisabled } from "./problems";
import { resetProvider } from "./provider-sim/lab-client";

/** Everything back to the seed: users, identities, leases, settings, provider state and its call log. */
export async function resetLab(db: Kysely<Database>): Promise<void> {
  await seedAppData(db);
  await resetProvider();
}

export function requireLab(): void {
  if (!config.labEnabled) throw new LabDisabled();
}
