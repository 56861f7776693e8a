/**
 * The lab's settings: one JSON document in the database, so every tab and every app instance shares
 * them. `PUT /api/lab` takes any part of it (a deep partial); the merged whole is validated again.
 */
import { sql, type Kysely } from "kysely";
import { z } from "zod";
import type { Database } from "../db/schema";
import { config } from "./config";
import { parseOrThrow } from "./http";

export const strategies = ["lease", "none", "transaction", "advisory", "optimistic"] as const;
export type Strategy = (typeof strategies)[number];

export const providerEndpoints = ["get", "unlink", "link"] as const;
export type ProviderEndpoint = (typeof providerEndpoints)[number];

/** One-shot outcomes that can be queued per endpoint, to stage "first call succeeds, second fails". */
export const scriptedOutcomes = ["ok", "500", "503", "429", "network-error", "timeout", "applied-late"] as const;
export type ScriptedOutcome = (typeof scriptedOutcomes)[number];

export const latencyModes = ["fixed", "uniform", "longTail"] as const;

/** Where an operation can be paused on purpose (as by a GC pause), named by the step it just reached. */
export const stallPoints = ["acquired", "unlinked", "linked", "saved"] as const;
export type StallPoint = (typeof stallPoints)[number];

const milliseconds = z.number().int().min(0).max(60_000);
const rate = z.number().min(0).max(1);

/** How one provider endpoint (or all of them) misbehaves. */
const chaosShape = {
  latencyMode: z.enum(latencyModes),
  /** fixed: latencyMs ± jitterMs */
  latencyMs: milliseconds,
  jitterMs: milliseconds,
  /** uniform: between minLatencyMs and maxLatencyMs */
  minLatencyMs: milliseconds,
  maxLatencyMs: milliseconds,
  /** longTail: log-normal with this median and 99th percentile */
  medianLatencyMs: milliseconds,
  p99LatencyMs: milliseconds,
  /** share of calls answered with `errorStatus` */
  failureRate: rate,
  errorStatus: z.union([z.literal(500), z.literal(503)]),
  /** share of calls that fail at the network level (no HTTP answer) */
  networkErrorRate: rate,
  /** share of calls that hang until the caller gives up */
  timeoutRate: rate,
  /** share of calls answered 429 with Retry-After */
  rateLimitRate: rate,
  retryAfterSeconds: z.number().int().min(0).max(60),
  /** share of calls the provider applies but answers only after the caller's deadline */
  appliedLateRate: rate,
};

/** How one provider endpoint misbehaves, all fields resolved. */
export type Chaos = { [K in keyof typeof chaosShape]: z.infer<(typeof chaosShape)[K]> };
/** Per-endpoint overrides: null inherits the global value. */
const endpointOverridesSchema = z.strictObject(
  Object.fromEntries(Object.entries(chaosShape).map(([key, schema]) => [key, schema.nullable()])) as {
    [K in keyof typeof chaosShape]: z.ZodNullable<(typeof chaosShape)[K]>;
  },
);
const scriptSchema = z.array(z.enum(scriptedOutcomes)).max(20);

export const labSettingsSchema = z
  .strictObject({
    strategy: z.enum(strategies),
    leaseTtlMs: z.number().int().min(500).max(120_000),
    clientGuard: z.boolean(),
    /** Connections in each app instance's pool: small, so that exhausting it is visible. */
    poolSize: z.number().int().min(1).max(20),
    /**
     * The lease's safeguards beyond the textbook: provider calls bounded by a deadline inside the lease,
     * an owner-checked renewal and a check that the lease is still mine before each irreversible step.
     * Off, the lab shows what a TTL shorter than the work does.
     */
    leaseSafeguards: z.boolean(),
    /** Faults injected into this app's own code, to watch the safeguards work. */
    faults: z.strictObject({
      /** One-shot: the next lease-guarded operation pauses this long after reaching this step. */
      stall: z.strictObject({ at: z.enum(stallPoints), ms: z.number().int().min(0).max(60_000) }).nullable(),
      /** The first N attempts of every lease release fail (4 or more: all of them; the TTL frees it). */
      releaseFailures: z.number().int().min(0).max(10),
    }),
    provider: z.strictObject({
      ...chaosShape,
      /** The provider refuses a call whose X-Fencing-Token is lower than one it already saw for an account. */
      enforceFencing: z.boolean(),
      /** A seed makes every random choice of the provider repeatable; null uses Math.random. */
      seed: z.number().int().min(0).max(2 ** 31 - 1).nullable(),
      endpoints: z.strictObject({ get: endpointOverridesSchema, unlink: endpointOverridesSchema, link: endpointOverridesSchema }),
      script: z.strictObject({ get: scriptSchema, unlink: scriptSchema, link: scriptSchema }),
    }),
  })
  .superRefine((settings, context) => {
    const reported = new Set<string>();
    const report = (path: string[], message: string) => {
      if (reported.has(path.join("."))) return;
      reported.add(path.join("."));
      context.addIssue({ code: "custom", path, message });
    };
    for (const endpoint of providerEndpoints) {
      const chaos = effectiveChaos(settings, endpoint);
      const overrides = settings.provider.endpoints[endpoint];
      // A rule broken by an endpoint's own overrides is reported there; otherwise at the global value.
      const at = (...fields: (keyof Chaos)[]) => (fields.some((field) => overrides[field] !== null) ? ["provider", "endpoints", endpoint] : ["provider"]);
      if (chaos.minLatencyMs > chaos.maxLatencyMs) report([...at("minLatencyMs", "maxLatencyMs"), "minLatencyMs"], "must not exceed maxLatencyMs");
      if (chaos.medianLatencyMs > chaos.p99LatencyMs) report([...at("medianLatencyMs", "p99LatencyMs"), "medianLatencyMs"], "must not exceed p99LatencyMs");
      const rates = ["failureRate", "networkErrorRate", "timeoutRate", "rateLimitRate", "appliedLateRate"] as const;
      if (rates.reduce((sum, field) => sum + chaos[field], 0) > 1 + 1e-9) report(at(...rates), `the failure rates of ${endpoint} add up to more than 1`);
    }
  });

export type LabSettings = z.infer<typeof labSettingsSchema>;

/** Any part of the settings, nested objects partial too; arrays and null replace. */
export const labSettingsPatchSchema = deepPartial(labSettingsSchema);

const calmChaos: Chaos = {
  latencyMode: "fixed",
  latencyMs: 800,
  jitterMs: 0,
  minLatencyMs: 200,
  maxLatencyMs: 1_500,
  medianLatencyMs: 400,
  p99LatencyMs: 4_000,
  failureRate: 0,
  errorStatus: 503,
  networkErrorRate: 0,
  timeoutRate: 0,
  rateLimitRate: 0,
  retryAfterSeconds: 1,
  appliedLateRate: 0,
};

const noOverrides = Object.fromEntries(Object.keys(calmChaos).map((key) => [key, null])) as { [K in keyof Chaos]: null };

export const defaultLabSettings: LabSettings = {
  strategy: "lease",
  leaseTtlMs: 10_000,
  clientGuard: false,
  poolSize: 4,
  leaseSafeguards: true,
  faults: { stall: null, releaseFailures: 0 },
  provider: {
    ...calmChaos,
    enforceFencing: false,
    seed: null,
    endpoints: { get: noOverrides, unlink: noOverrides, link: noOverrides },
    script: { get: [], unlink: [], link: [] },
  },
};

/** The misbehaviour in force for one endpoint: its overrides over the global values. */
export function effectiveChaos(settings: LabSettings, endpoint: ProviderEndpoint): Chaos {
  const overrides = settings.provider.endpoints[endpoint];
  return Object.fromEntries(
    Object.keys(calmChaos).map((key) => [key, overrides[key as keyof Chaos] ?? settings.provider[key as keyof Chaos]]),
  ) as Chaos;
}

/** The settings in force: shared by every tab and app instance because they live in the database. */
export async function getLabSettings(db: Kysely<Database>): Promise<LabSettings> {
  if (!config.labEnabled) return defaultLabSettings;
  const row = await db.selectFrom("lab_settings").select("settings").executeTakeFirst();
  return row ? settingsFrom(row.settings) : defaultLabSettings;
}

export async function updateLabSettings(db: Kysely<Database>, patch: unknown): Promise<LabSettings> {
  // The merged whole is validated again: some rules (bounds, rates) span several fields.
  const next = parseOrThrow(labSettingsSchema, deepMerge(await getLabSettings(db), patch), "body");
  await db
    .insertInto("lab_settings")
    .values({ settings: JSON.stringify(next) })
    .onConflict((conflict) => conflict.column("id").doUpdateSet({ settings: JSON.stringify(next) }))
    .execute();
  return next;
}

/**
 * Takes a one-shot setting (a scripted outcome, a stall): reads it and writes the settings without it
 * under a row lock, so that each is used exactly once, whichever app instance uses it.
 */
async function takeOneShot<T>(db: Kysely<Database>, take: (settings: LabSettings) => { value: T; rest: LabSettings } | null): Promise<T | null> {
  if (!config.labEnabled) return null;
  return db.transaction().execute(async (trx) => {
    const row = await sql<{ settings: unknown }>`SELECT settings FROM lab_settings FOR UPDATE`.execute(trx);
    if (!row.rows[0]) return null;
    const taken = take(settingsFrom(row.rows[0].settings));
    if (!taken) return null;
    await trx.updateTable("lab_settings").set({ settings: JSON.stringify(taken.rest) }).execute();
    return taken.value;
  });
}

export function takeScriptedOutcome(db: Kysely<Database>, endpoint: ProviderEndpoint): Promise<ScriptedOutcome | null> {
  return takeOneShot(db, (settings) => {
    const [next, ...rest] = settings.provider.script[endpoint];
    return next ? { value: next, rest: deepMerge(settings, { provider: { script: { [endpoint]: rest } } }) } : null;
  });
}

export function takeStall(db: Kysely<Database>): Promise<{ at: StallPoint; ms: number } | null> {
  return takeOneShot(db, (settings) => {
    const stall = settings.faults.stall;
    return stall ? { value: stall, rest: deepMerge(settings, { faults: { stall: null } }) } : null;
  });
}

// Stored settings from an older shape fall back to the defaults field by field.
function settingsFrom(stored: unknown): LabSettings {
  const parsed = labSettingsSchema.safeParse(deepMerge(defaultLabSettings, stored));
  return parsed.success ? parsed.data : defaultLabSettings;
}

/** Plain objects merge key by key; anything else (numbers, strings, arrays, null) replaces. */
export function deepMerge<T>(base: T, patch: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(patch)) return (patch === undefined ? base : patch) as T;
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) merged[key] = key in base ? deepMerge(base[key], value) : value;
  return merged as T;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A zod schema accepting any part of `schema`: object fields become optional, all the way down. */
function deepPartial(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodObject) {
    const shape = Object.fromEntries(Object.entries(schema.shape as Record<string, z.ZodType>).map(([key, field]) => [key, deepPartial(field).optional()]));
    return z.strictObject(shape);
  }
  return schema;
}
