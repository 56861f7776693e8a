/**
 * Each Playwright worker has an app and a database of its own, so that workers run side by side: the global
 * set-up starts one per worker, and the config, evaluated again in each worker process, points that worker's
 * `baseURL`, `DATABASE_URL` and port variables (`PEER_APP_PORT`, …) at its own.
 */
import { databaseFor } from "../test/harness/databases";
import { usePorts, workerPorts } from "../test/harness/ports";

/** Set by the global set-up for the workers: the database URL of each, by worker. */
const databasesVariable = "E2E_WORKER_DATABASE_URLS";

export const workerDatabase = (worker: number): string => databaseFor(`e2e_${worker + 1}`);
export const workerAppPort = (worker: number): number => workerPorts("playwright", worker).E2E_APP_PORT;

/** In the global set-up: hands the workers their databases' URLs. */
export function shareWorkerDatabases(urls: string[]): void {
  process.env[databasesVariable] = JSON.stringify(urls);
}

/**
 * In a worker process (Playwright numbers them from 0 in `TEST_PARALLEL_INDEX`): its app's URL, with its
 * database and ports put into `process.env`. Null in the main process.
 */
export function enterWorker(): { baseUrl: string } | null {
  if (process.env.TEST_PARALLEL_INDEX === undefined) return null;
  const worker = Number(process.env.TEST_PARALLEL_INDEX);
  const databaseUrl = (JSON.parse(process.env[databasesVariable] ?? "[]") as string[])[worker];
  if (!databaseUrl) throw new Error(`no database for Playwright worker ${worker}: see e2e/global-setup.ts`);
  process.env.DATABASE_URL = databaseUrl;
  usePorts(workerPorts("playwright", worker));
  return { baseUrl: `http://127.0.0.1:${workerAppPort(worker)}` };
}
