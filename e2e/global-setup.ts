import { prepareDatabase } from "../db/prepare";
import { e2ePort } from "../playwright.config";
import { startApp } from "../test/app-server";

export default async function globalSetup(): Promise<() => Promise<void>> {
  const databaseUrl = await prepareDatabase("leaselab_e2e", { fresh: true });
  const app = await startApp({ databaseUrl, port: e2ePort });
  return app.stop;
}
