import { applyDatabaseTimeouts, createDb } from "./connection";
import { migrateToLatest } from "./migrate";
import { seedIfEmpty } from "./seed";
import { ensureDatabase, recreateDatabase } from "./server";

/**
 * Makes `database` ready for the app: the server found or started, the database created, migrated,
 * seeded when empty, and given the app's timeouts. Returns its URL. `fresh` drops it first (tests).
 */
export async function prepareDatabase(database: string, { fresh = false } = {}): Promise<string> {
  const url =
    process.env.DATABASE_URL && !fresh
      ? process.env.DATABASE_URL
      : await (fresh ? recreateDatabase : ensureDatabase)(database);
  const { db } = createDb(url, 1);
  try {
    await migrateToLatest(db);
    await seedIfEmpty(db);
    await applyDatabaseTimeouts(db);
  } finally {
    await db.destroy();
  }
  return url;
}
