/** The port the simulated provider listens on under `npm run dev` and `npm start`. */
const providerPort = Number(process.env.IDP_PORT ?? 4010);

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

/** Process-level configuration, read from the environment once. */
export const config = {
  /** The app's pool: PostgreSQL itself, or a pooler in front of it. */
  databaseUrl: process.env.DATABASE_URL ?? "",
  /**
   * PostgreSQL itself, for what a transaction pooler cannot carry from one statement to the next: LISTEN,
   * a session lock the lab needs to hold (the experiments' run lock), session settings. The same as
   * `databaseUrl` unless `npm run dev -- --pgbouncer` (or a managed database's pooled URL) sets it apart.
   */
  directDatabaseUrl: process.env.DATABASE_DIRECT_URL || process.env.DATABASE_URL || "",
  /**
   * `DATABASE_POOLER=transaction`: `databaseUrl` is a pooler in transaction mode (PgBouncer, Supabase's
   * port 6543, Neon's pooled URL), so the pool sends no named prepared statements (db/prepared-statements.ts).
   */
  transactionPooler: process.env.DATABASE_POOLER === "transaction",
  /** Whether LISTEN reaches PostgreSQL: not through a transaction pooler with no direct URL beside it. */
  hearsNotifications: !(process.env.DATABASE_POOLER === "transaction" && !process.env.DATABASE_DIRECT_URL),
  providerPort,
  identityProviderBaseUrl: (process.env.IDP_BASE_URL ?? `http://127.0.0.1:${providerPort}`).replace(/\/$/, ""),
  /** The lab's teaching controls; `LAB_ENABLED=false` turns them off (settings stay at their defaults). */
  labEnabled: process.env.LAB_ENABLED !== "false",
  /** The simulated provider answers provider calls unless the app talks to a real one. */
  simulateProvider: process.env.SIMULATE_PROVIDER !== "false",
  poolSize: Number(process.env.DB_POOL_SIZE ?? 4),
  /** The product's switch as this process runs it: each default, unless its environment variable says otherwise. */
  switch: {
    leaseTtlMs: Number(process.env.LEASE_TTL_MS ?? switchDefaults.leaseTtlMs),
    providerApplyLimitMs: Number(process.env.PROVIDER_APPLY_LIMIT_MS ?? switchDefaults.providerApplyLimitMs),
    providerEnforcesFencing: process.env.PROVIDER_ENFORCES_FENCING
      ? process.env.PROVIDER_ENFORCES_FENCING === "true"
      : switchDefaults.providerEnforcesFencing,
    reconcileAfterMs: Number(process.env.RECONCILE_AFTER_MS ?? switchDefaults.reconcileAfterMs),
  },
  /**
   * Where the simulated provider keeps its state when not in the lab's database: under `--replica` and `--ha`,
   * a database of the embedded server, which does not fail over (its experiments' sandbox saves it there).
   */
  providerDatabaseUrl: process.env.PROVIDER_DATABASE_URL ?? "",
  /** The launcher's hand on a replicated database (`--replica`, `--ha`), for the failover experiments; empty: none. */
  databaseOperatorUrl: process.env.LAB_DATABASE_OPERATOR_URL ?? "",
  /**
   * Whether the app exports traces and metrics over OTLP (lib/web/opentelemetry.ts): only with an endpoint. The
   * exporters read it, and the other `OTEL_*` variables, themselves.
   */
  exportsTelemetry: Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT),
  /** The redis-server of the `redis` strategy (`--redis`); empty: none. */
  redisUrl: process.env.REDIS_URL ?? "",
};
