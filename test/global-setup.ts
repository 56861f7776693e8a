import { ensureDatabaseServer } from "../db/server";

/**
 * Finds or starts the PostgreSQL server once, before the files do: they run side by side, and each makes a
 * database of its own on it (`test/setup/file-database.ts`).
 */
export default async function setup(): Promise<void> {
  await ensureDatabaseServer();
}
