/** The port the simulated provider listens on under `npm run dev` and `npm start`. */
const providerPort = Number(process.env.IDP_PORT ?? 4010);

/** Process-level configuration, read from the environment once. */
export const config = {
  databaseUrl: process.env.DATABASE_URL ?? "",
  providerPort,
  identityProviderBaseUrl: (process.env.IDP_BASE_URL ?? `http://127.0.0.1:${providerPort}`).replace(/\/$/, ""),
  /** The lab's teaching controls; `LAB_ENABLED=false` turns them off (settings stay at their defaults). */
  labEnabled: process.env.LAB_ENABLED !== "false",
  /** The simulated provider answers provider calls unless the app talks to a real one. */
  simulateProvider: process.env.SIMULATE_PROVIDER !== "false",
  poolSize: Number(process.env.DB_POOL_SIZE ?? 4),
};
