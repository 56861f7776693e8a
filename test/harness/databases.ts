/**
 * The database each test run and the bench use, fresh every time. `LAB_DB_PREFIX` keeps runs apart when
 * several share one PostgreSQL server (e.g. two checkouts testing at once).
 */
export const databaseFor = (purpose: "test" | "e2e" | "bench" | "soak" | "screenshots"): string =>
  `${process.env.LAB_DB_PREFIX ?? "leaselab"}_${purpose}`;
