import type { FullConfig } from "@playwright/test";
import { prepareDatabase } from "../db/prepare";
import { startApp } from "../test/harness/app-server";
import { shareWorkerDatabases, workerAppPort, workerDatabase } from "./workers";

/** An app on a fresh database of its own for each worker that may run (see e2e/workers.ts). */
export default async function globalSetup(config: FullConfig): Promise<() => Promise<void>> {
  const workers = Array.from({ length: config.workers }, (_, worker) => worker);
  const databaseUrls = await Promise.all(
    workers.map((worker) => prepareDatabase(workerDatabase(worker), { fresh: true })),
  );
  shareWorkerDatabases(databaseUrls);
  const apps = await Promise.all(
    workers.map((worker) => startApp({ databaseUrl: databaseUrls[worker]!, port: workerAppPort(worker) })),
  );
  return async () => {
    await Promise.all(apps.map((app) => app.stop()));
  };
}
