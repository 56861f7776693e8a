import { prepareDatabase } from "../db/prepare";
import { e2ePort } from "../playwright.config";
import { startApp } from "../test/harness/app-server";
import { databaseFor } from "../test/harness/databases";

export default async function globalSetup(): Promise<() => Promise<void>> {
  const databaseUrl = await prepareDatabase(databaseFor("e2e"), { fresh: true });
  const app = await startApp({ databaseUrl, port: e2ePort });
  return app.stop;
}
