import type { TestProject } from "vitest/node";
import { createDb } from "../db/connection";
import { migrateToLatest } from "../db/migrate";
import { seedIfEmpty } from "../db/seed";
import { recreateDatabase } from "../db/server";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const databaseUrl = await recreateDatabase("leaselab_test");
  const { db } = createDb(databaseUrl, 2);
  await migrateToLatest(db);
  await seedIfEmpty(db);
  await db.destroy();
  project.provide("databaseUrl", databaseUrl);
}
