import type { TestProject } from "vitest/node";
import { prepareDatabase } from "../db/prepare";
import { startApp } from "./harness/app-server";
import { databaseFor } from "./harness/databases";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    appUrl: string;
  }
}

/** One database and one running app for the whole run; test files run one after another. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const databaseUrl = await prepareDatabase(databaseFor("test"), { fresh: true });
  const app = await startApp({ databaseUrl, port: Number(process.env.TEST_APP_PORT ?? 3211) });
  project.provide("databaseUrl", databaseUrl);
  project.provide("appUrl", app.baseUrl);
  return app.stop;
}
