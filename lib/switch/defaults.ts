/**
 * The product's switch as it runs unless told otherwise: the one place these numbers are written. Anything
 * else that configures a switch starts from them, so that leaving it out changes nothing a switch does.
 */
export const switchDefaults = {
  leaseTtlMs: 10_000,
  /** The provider's limit: a write it has not applied this long after it arrived is never applied. */
  providerApplyLimitMs: 10_000,
  /** Whether the provider refuses a write whose fencing token is older than one it has seen. */
  providerEnforcesFencing: false,
  /** How long a half-done switch stays quiet before the reconciler settles it. */
  reconcileAfterMs: 3_000,
};

/** The product's switch as this process runs it: each default, unless its environment variable says otherwise. */
export const switchConfig: typeof switchDefaults = {
  leaseTtlMs: Number(process.env.LEASE_TTL_MS ?? switchDefaults.leaseTtlMs),
  providerApplyLimitMs: Number(process.env.PROVIDER_APPLY_LIMIT_MS ?? switchDefaults.providerApplyLimitMs),
  providerEnforcesFencing: process.env.PROVIDER_ENFORCES_FENCING
    ? process.env.PROVIDER_ENFORCES_FENCING === "true"
    : switchDefaults.providerEnforcesFencing,
  reconcileAfterMs: Number(process.env.RECONCILE_AFTER_MS ?? switchDefaults.reconcileAfterMs),
};
