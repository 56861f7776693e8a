/**
 * The simulated provider the test apps talk to: one process per database, shared by every app on that
 * database in a run (as `npm start -- --instances N` shares one), so that a call in flight outlives an app
 * killed in the middle of it. Started on a free port by the first app of its database, as a child of the
 * process that started that app (the global set-up, a test file's worker), and ending with it.
 */
import { probeProvider, startChildProvider } from "../../lib/lab/provider-process-control";
import { databaseOf } from "../../lib/provider-sim/health";

/**
 * The providers started so far, by database: in this process, and in `process.env` for the processes it
 * starts later (Vitest's and Playwright's workers start after the global set-up, with its environment).
 */
const startedVariable = "LAB_TEST_PROVIDERS";
const starting = new Map<string, Promise<string>>();

/** The base URL of the provider for `databaseUrl`, started if none is running yet. */
export function providerFor(databaseUrl: string): Promise<string> {
  const database = databaseOf(databaseUrl);
  const known = starting.get(database);
  if (known) return known;
  const provider = reuseOrStart(databaseUrl, database);
  starting.set(database, provider);
  provider.catch(() => starting.delete(database));
  return provider;
}

async function reuseOrStart(databaseUrl: string, database: string): Promise<string> {
  const started = JSON.parse(process.env[startedVariable] ?? "{}") as Record<string, string>;
  const inherited = started[database];
  if (inherited) {
    const health = await probeProvider(inherited);
    if (typeof health === "object" && health.database === database) return inherited;
  }
  const baseUrl = await startChildProvider(databaseUrl);
  process.env[startedVariable] = JSON.stringify({ ...started, [database]: baseUrl });
  return baseUrl;
}
