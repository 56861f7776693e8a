import path from "node:path";

const root = path.resolve(import.meta.dirname, "../..");
// PostgreSQL cuts identifiers at 63 bytes; a longer name would be cut silently and could meet another.
const longestName = 63;

/**
 * The database a test run, a test file, a Playwright worker, the bench or the soak uses, fresh every time.
 * `LAB_DB_PREFIX` keeps runs apart when several share one PostgreSQL server (e.g. two checkouts testing at once).
 */
export function databaseFor(purpose: string): string {
  const name = `${process.env.LAB_DB_PREFIX ?? "leaselab"}_${purpose}`.toLowerCase().replace(/[^a-z0-9_]+/g, "_");
  if (name.length > longestName) throw new Error(`database name ${name} is longer than ${longestName} characters`);
  return name;
}

/** The database of one test file, named after its path: `test/crash.test.ts` → `<prefix>_test_crash`. */
export const databaseForFile = (testFile: string, suffix?: string): string =>
  databaseFor(path.relative(root, testFile).replace(/\.test\.ts$/, "") + (suffix ? `-${suffix}` : ""));
