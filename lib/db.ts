import type { Kysely } from "kysely";
import type pg from "pg";
import { createDb } from "../db/connection";
import type { Database } from "../db/schema";
import { config } from "./config";

interface AppDatabase {
  db: Kysely<Database>;
  pool: pg.Pool;
}

// One pool per process: Next.js may evaluate this module in several bundles (instrumentation, routes).
const holder = globalThis as typeof globalThis & { __leaseLockLabDb?: AppDatabase };

export function appDatabase(): AppDatabase {
  if (!holder.__leaseLockLabDb) {
    if (!config.databaseUrl) throw new Error("DATABASE_URL is not set: start the app with `npm run dev` or `npm start`");
    holder.__leaseLockLabDb = createDb(config.databaseUrl, config.poolSize);
  }
  return holder.__leaseLockLabDb;
}

export const appDb = (): Kysely<Database> => appDatabase().db;
