/**
 * The simulator's knobs: how slow and how broken each endpoint is, its one-shot script, fencing and its
 * apply limit. The simulator owns this schema; whoever drives it (the lab) embeds it in its own settings
 * and hands the values in through `ChaosSource` (call-draw.ts). Pure (no server imports): the page imports
 * the same option lists and bounds.
 */
import { z } from "zod";

export const providerEndpoints = ["get", "unlink", "link"] as const;
export type ProviderEndpoint = (typeof providerEndpoints)[number];

/** One-shot outcomes that can be queued per endpoint, to stage "first call succeeds, second fails". */
export const scriptedOutcomes = ["ok", "500", "503", "429", "network-error", "timeout", "applied-late"] as const;
export type ScriptedOutcome = (typeof scriptedOutcomes)[number];

export const latencyModes = ["fixed", "uniform", "longTail"] as const;

/** Bounds the page's inputs share with the schema. */
export const providerBounds = {
  milliseconds: { min: 0, max: 60_000 },
  applyLimitMs: { min: 100, max: 60_000 },
  retryAfterSeconds: { min: 0, max: 60 },
  seed: { min: 0, max: 2 ** 31 - 1 },
  scriptLength: 20,
} as const;

export const milliseconds = z.number().int().min(providerBounds.milliseconds.min).max(providerBounds.milliseconds.max);
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
  retryAfterSeconds: z
    .number()
    .int()
    .min(providerBounds.retryAfterSeconds.min)
    .max(providerBounds.retryAfterSeconds.max),
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
const scriptSchema = z.array(z.enum(scriptedOutcomes)).max(providerBounds.scriptLength);

export const providerSettingsSchema = z
  .strictObject({
    ...chaosShape,
    /** The provider refuses a call whose X-Fencing-Token is lower than one it already saw for an account. */
    enforceFencing: z.boolean(),
    /**
     * Fences compared as (X-Fencing-Generation, X-Fencing-Token), in that order: any holder on a promoted
     * primary outranks every holder on the one before it. False: the token alone, as a provider that keeps
     * only the counter (a promotion that lost acquisitions makes it accept a late write, or refuse the holder).
     */
    fenceGenerations: z.boolean(),
    /**
     * The provider's hard limit: a request it has not applied this long after it arrived is never
     * applied. Until then, a call whose answer was lost may still land.
     */
    applyLimitMs: z.number().int().min(providerBounds.applyLimitMs.min).max(providerBounds.applyLimitMs.max),
    /** A seed makes every random choice of the provider repeatable; null uses Math.random. */
    seed: z.number().int().min(providerBounds.seed.min).max(providerBounds.seed.max).nullable(),
    endpoints: z.strictObject({
      get: endpointOverridesSchema,
      unlink: endpointOverridesSchema,
      link: endpointOverridesSchema,
    }),
    script: z.strictObject({ get: scriptSchema, unlink: scriptSchema, link: scriptSchema }),
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
      const overrides = settings.endpoints[endpoint];
      // A rule broken by an endpoint's own overrides is reported there; otherwise at the global value.
      const at = (...fields: (keyof Chaos)[]) =>
        fields.some((field) => overrides[field] !== null) ? ["endpoints", endpoint] : [];
      if (chaos.minLatencyMs > chaos.maxLatencyMs)
        report([...at("minLatencyMs", "maxLatencyMs"), "minLatencyMs"], "must not exceed maxLatencyMs");
      if (chaos.medianLatencyMs > chaos.p99LatencyMs)
        report([...at("medianLatencyMs", "p99LatencyMs"), "medianLatencyMs"], "must not exceed p99LatencyMs");
      const rates = ["failureRate", "networkErrorRate", "timeoutRate", "rateLimitRate", "appliedLateRate"] as const;
      if (rates.reduce((sum, field) => sum + chaos[field], 0) > 1 + 1e-9)
        report(at(...rates), `the failure rates of ${endpoint} add up to more than 1`);
    }
  });

export type ProviderSettings = z.infer<typeof providerSettingsSchema>;

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

/** A calm provider: 800 ms a call, nothing failing, no fencing. */
export const defaultProviderSettings: ProviderSettings = {
  ...calmChaos,
  enforceFencing: false,
  fenceGenerations: true,
  applyLimitMs: 10_000,
  seed: null,
  endpoints: { get: noOverrides, unlink: noOverrides, link: noOverrides },
  script: { get: [], unlink: [], link: [] },
};

/** The misbehaviour in force for one endpoint: its overrides over the global values. */
export function effectiveChaos(settings: ProviderSettings, endpoint: ProviderEndpoint): Chaos {
  const overrides = settings.endpoints[endpoint];
  return Object.fromEntries(
    Object.keys(calmChaos).map((key) => [key, overrides[key as keyof Chaos] ?? settings[key as keyof Chaos]]),
  ) as Chaos;
}
