/**
 * The lab's settings: their schema, bounds and defaults. Pure (no server imports), so the page imports
 * the same option lists and bounds. `PUT /api/lab` takes any part of it (a deep partial).
 */
import { z } from "zod";

export const strategies = [
  "lease",
  "none",
  "transaction",
  "advisory",
  "optimistic",
  "session-advisory",
  "in-process",
  "redis",
] as const;
export type Strategy = (typeof strategies)[number];

export const providerEndpoints = ["get", "unlink", "link"] as const;
export type ProviderEndpoint = (typeof providerEndpoints)[number];

/** One-shot outcomes that can be queued per endpoint, to stage "first call succeeds, second fails". */
export const scriptedOutcomes = ["ok", "500", "503", "429", "network-error", "timeout", "applied-late"] as const;
export type ScriptedOutcome = (typeof scriptedOutcomes)[number];

export const latencyModes = ["fixed", "uniform", "longTail"] as const;

/**
 * Where an operation can be paused on purpose (as by a GC pause), named by the step it just reached; and
 * `save`: after the last ownership check, right before the save statement is sent, where no check can
 * catch the pause and only the save's own condition stops a stale write.
 */
export const stallPoints = ["acquired", "unlinked", "linked", "saved", "save"] as const;
export type StallPoint = (typeof stallPoints)[number];

/** Where an operation can be made to crash (the process dies: no `finally`, no release, no renewal). */
export const crashPoints = ["after-acquire", "after-unlink", "after-link"] as const;
export type CrashPoint = (typeof crashPoints)[number];

/** Bounds the page's inputs share with the schema. */
export const bounds = {
  leaseTtlMs: { min: 500, max: 120_000 },
  poolSize: { min: 1, max: 20 },
  milliseconds: { min: 0, max: 60_000 },
  applyLimitMs: { min: 100, max: 60_000 },
  releaseFailures: { min: 0, max: 10 },
  retryAfterSeconds: { min: 0, max: 60 },
  seed: { min: 0, max: 2 ** 31 - 1 },
  scriptLength: 20,
} as const;

const milliseconds = z.number().int().min(bounds.milliseconds.min).max(bounds.milliseconds.max);
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
  retryAfterSeconds: z.number().int().min(bounds.retryAfterSeconds.min).max(bounds.retryAfterSeconds.max),
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
const scriptSchema = z.array(z.enum(scriptedOutcomes)).max(bounds.scriptLength);

export const labSettingsSchema = z
  .strictObject({
    strategy: z.enum(strategies),
    leaseTtlMs: z.number().int().min(bounds.leaseTtlMs.min).max(bounds.leaseTtlMs.max),
    clientGuard: z.boolean(),
    /** Connections in each app instance's pool: small, so that exhausting it is visible. */
    poolSize: z.number().int().min(bounds.poolSize.min).max(bounds.poolSize.max),
    /**
     * The lease's safeguards beyond the textbook: provider calls bounded by a deadline inside the lease,
     * an owner-checked renewal and a check that the lease is still mine before each irreversible step.
     * Off, the lab shows what a TTL shorter than the work does.
     */
    leaseSafeguards: z.boolean(),
    /**
     * Whether the entity save (a rename) writes the lease's columns back from the copy it read, as an ORM
     * that maps them as entity fields does: a lease taken meanwhile is wiped.
     */
    lockColumnMapped: z.boolean(),
    /**
     * How long after an operation's switch ended unfinished the background reconciler may settle it
     * (a quiet period, so the half-done state can be seen); null: never, only the user's next switch does.
     */
    reconcileAfterMs: z.number().int().min(bounds.milliseconds.min).max(bounds.milliseconds.max).nullable(),
    /** Faults injected into this app's own code, to watch the safeguards work. */
    faults: z.strictObject({
      /** One-shot: the next lease-guarded operation pauses this long after reaching this step. */
      stall: z.strictObject({ at: z.enum(stallPoints), ms: milliseconds }).nullable(),
      /** The first N attempts of every lease release fail (4 or more: all of them; the TTL frees it). */
      releaseFailures: z.number().int().min(bounds.releaseFailures.min).max(bounds.releaseFailures.max),
      /** One-shot: the next lease-guarded operation crashes at this point. */
      crash: z.enum(crashPoints).nullable(),
      /**
       * The lease's final save without its condition (the lesson's wrong answer: a save that trusts the
       * checks made before it). A holder paused at `save` past its lease then overwrites the next holder.
       */
      unfencedSave: z.boolean(),
      /** Every renewal of the lease answers this much later, as on a slow database (0: at once). */
      slowRenewalMs: milliseconds,
    }),
    provider: z.strictObject({
      ...chaosShape,
      /** The provider refuses a call whose X-Fencing-Token is lower than one it already saw for an account. */
      enforceFencing: z.boolean(),
      /**
       * The provider's hard limit: a request it has not applied this long after it arrived is never
       * applied. Until then, a call whose answer was lost may still land.
       */
      applyLimitMs: z.number().int().min(bounds.applyLimitMs.min).max(bounds.applyLimitMs.max),
      /** A seed makes every random choice of the provider repeatable; null uses Math.random. */
      seed: z.number().int().min(bounds.seed.min).max(bounds.seed.max).nullable(),
      endpoints: z.strictObject({
        get: endpointOverridesSchema,
        unlink: endpointOverridesSchema,
        link: endpointOverridesSchema,
      }),
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
      const at = (...fields: (keyof Chaos)[]) =>
        fields.some((field) => overrides[field] !== null) ? ["provider", "endpoints", endpoint] : ["provider"];
      if (chaos.minLatencyMs > chaos.maxLatencyMs)
        report([...at("minLatencyMs", "maxLatencyMs"), "minLatencyMs"], "must not exceed maxLatencyMs");
      if (chaos.medianLatencyMs > chaos.p99LatencyMs)
        report([...at("medianLatencyMs", "p99LatencyMs"), "medianLatencyMs"], "must not exceed p99LatencyMs");
      const rates = ["failureRate", "networkErrorRate", "timeoutRate", "rateLimitRate", "appliedLateRate"] as const;
      if (rates.reduce((sum, field) => sum + chaos[field], 0) > 1 + 1e-9)
        report(at(...rates), `the failure rates of ${endpoint} add up to more than 1`);
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

const noOverrides = Object.fromEntries(Object.keys(calmChaos).map((key) => [key, null])) as {
  [K in keyof Chaos]: null;
};

export const defaultLabSettings: LabSettings = {
  strategy: "lease",
  leaseTtlMs: 10_000,
  clientGuard: false,
  poolSize: 4,
  leaseSafeguards: true,
  lockColumnMapped: false,
  reconcileAfterMs: 3_000,
  faults: { stall: null, releaseFailures: 0, crash: null, unfencedSave: false, slowRenewalMs: 0 },
  provider: {
    ...calmChaos,
    enforceFencing: false,
    applyLimitMs: 10_000,
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

/** A zod schema accepting any part of `schema`: object fields become optional, all the way down. */
function deepPartial(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodObject) {
    const shape = Object.fromEntries(
      Object.entries(schema.shape as Record<string, z.ZodType>).map(([key, field]) => [
        key,
        deepPartial(field).optional(),
      ]),
    );
    return z.strictObject(shape);
  }
  return schema;
}
