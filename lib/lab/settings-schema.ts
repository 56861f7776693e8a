/**
 * The lab's settings: their schema, bounds and defaults. Pure (no server imports), so the page imports
 * the same option lists and bounds. `PUT /api/lab` takes any part of it (a deep partial).
 */
import { z } from "zod";
import {
  defaultProviderSettings,
  milliseconds,
  providerBounds,
  providerSettingsSchema,
} from "../provider-sim/chaos-settings";
import { switchDefaults } from "../core/config";

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

/**
 * Where an operation can be paused on purpose (as by a GC pause), named by the step it just reached; and
 * `save`: after the last ownership check, right before the save statement is sent, where no check can
 * catch the pause and only the save's own condition stops a stale write.
 */
export const stallPoints = ["acquired", "unlinked", "linked", "saved", "save"] as const;
export type StallPoint = (typeof stallPoints)[number];

/**
 * Where an operation can be made to crash (the process dies: no `finally`, no release, no renewal);
 * `during-link`: with its link call at the provider, which goes on with it (crash-during-call.ts).
 */
export const crashPoints = ["after-acquire", "after-unlink", "during-link", "after-link"] as const;
export type CrashPoint = (typeof crashPoints)[number];

/** Bounds the page's inputs share with the schema (the provider's among them). */
export const bounds = {
  ...providerBounds,
  leaseTtlMs: { min: 500, max: 120_000 },
  poolSize: { min: 1, max: 20 },
  releaseFailures: { min: 0, max: 10 },
} as const;

export const labSettingsSchema = z.strictObject({
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
  /** The simulated provider's knobs: its own schema (lib/provider-sim/chaos-settings.ts). */
  provider: providerSettingsSchema,
});

export type LabSettings = z.infer<typeof labSettingsSchema>;

/** Any part of the settings, nested objects partial too; arrays and null replace. */
export const labSettingsPatchSchema = deepPartial(labSettingsSchema);

export const defaultLabSettings: LabSettings = {
  strategy: "lease",
  leaseTtlMs: switchDefaults.leaseTtlMs,
  clientGuard: false,
  poolSize: 4,
  leaseSafeguards: true,
  lockColumnMapped: false,
  reconcileAfterMs: switchDefaults.reconcileAfterMs,
  faults: { stall: null, releaseFailures: 0, crash: null, unfencedSave: false, slowRenewalMs: 0 },
  provider: {
    ...defaultProviderSettings,
    applyLimitMs: switchDefaults.providerApplyLimitMs,
    enforceFencing: switchDefaults.providerEnforcesFencing,
  },
};

/**
 * A zod schema accepting any part of `schema`: object fields become optional, all the way down. An object whose
 * every field may be null (a provider endpoint's overrides: null inherits) may be given as null, every field null.
 */
function deepPartial(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodObject) {
    const fields = schema.shape as Record<string, z.ZodType>;
    const shape = Object.fromEntries(
      Object.entries(fields).map(([key, field]) => [key, deepPartial(field).optional()]),
    );
    const partial = z.strictObject(shape);
    if (!Object.values(fields).every((field) => field instanceof z.ZodNullable)) return partial;
    const everyFieldNull = () => Object.fromEntries(Object.keys(fields).map((key) => [key, null]));
    return z.preprocess((value) => (value === null ? everyFieldNull() : value), partial);
  }
  return schema;
}
