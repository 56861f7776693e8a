/** Process-level configuration, read from the environment once. */
export const config = {
  databaseUrl: process.env.DATABASE_URL ?? "",
  identityProviderBaseUrl: (process.env.IDP_BASE_URL ?? "https://idp.lab.test").replace(/\/$/, ""),
  /** The lab's teaching controls; `LAB_ENABLED=false` turns them off (settings stay at their defaults). */
  labEnabled: process.env.LAB_ENABLED !== "false",
  /** The simulated provider answers provider calls unless the app talks to a real one. */
  simulateProvider: process.env.SIMULATE_PROVIDER !== "false",
  poolSize: Number(process.env.DB_POOL_SIZE ?? 4),
};
