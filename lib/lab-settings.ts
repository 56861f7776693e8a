import type { Kysely } from "kysely";
import { z } from "zod";
import type { Database } from "../db/schema";
import { config } from "./config";

export const strategies = ["lease", "none"] as const;
export type Strategy = (typeof strategies)[number];

const providerSettingsSchema = z.strictObject({
  latencyMs: z.number().int().min(0).max(30_000),
  jitterMs: z.number().int().min(0).max(10_000),
  failureRate: z.number().min(0).max(1),
});

export const labSettingsSchema = z.strictObject({
  strategy: z.enum(strategies),
  leaseTtlMs: z.number().int().min(500).max(120_000),
  clientGuard: z.boolean(),
  provider: providerSettingsSchema,
});

export type LabSettings = z.infer<typeof labSettingsSchema>;

/** What `PUT /api/lab` accepts: any part of the settings, nested objects partial too. */
export const labSettingsPatchSchema = z.strictObject({
  strategy: labSettingsSchema.shape.strategy.optional(),
  leaseTtlMs: labSettingsSchema.shape.leaseTtlMs.optional(),
  clientGuard: labSettingsSchema.shape.clientGuard.optional(),
  provider: providerSettingsSchema.partial().optional(),
});

export type LabSettingsPatch = z.infer<typeof labSettingsPatchSchema>;

export const defaultLabSettings: LabSettings = {
  strategy: "lease",
  leaseTtlMs: 10_000,
  clientGuard: false,
  provider: { latencyMs: 800, jitterMs: 0, failureRate: 0 },
};

/** The settings in force: shared by every tab and app instance because they live in the database. */
export async function getLabSettings(db: Kysely<Database>): Promise<LabSettings> {
  if (!config.labEnabled) return defaultLabSettings;
  const row = await db.selectFrom("lab_settings").select("settings").executeTakeFirst();
  if (!row) return defaultLabSettings;
  // Stored settings from an older shape fall back to the defaults field by field.
  const parsed = labSettingsSchema.safeParse(applyPatch(defaultLabSettings, row.settings as LabSettingsPatch));
  return parsed.success ? parsed.data : defaultLabSettings;
}

export async function updateLabSettings(db: Kysely<Database>, patch: LabSettingsPatch): Promise<LabSettings> {
  const next = labSettingsSchema.parse(applyPatch(await getLabSettings(db), patch));
  await db
    .insertInto("lab_settings")
    .values({ settings: JSON.stringify(next) })
    .onConflict((conflict) => conflict.column("id").doUpdateSet({ settings: JSON.stringify(next) }))
    .execute();
  return next;
}

function applyPatch(base: LabSettings, patch: LabSettingsPatch): LabSettings {
  return { ...base, ...patch, provider: { ...base.provider, ...patch.provider } };
}
