/**
 * The database this folder's tests run on, with nothing from outside the folder: the one a vitest global
 * set-up provided (`inject("databaseUrl")`: this folder's own `global-setup.ts`, or the repository's, which
 * gives each file a fresh database), else `DATABASE_URL`. Each test file makes and drops tables of its own.
 */
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { inject } from "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

export function testDatabaseUrl(): string {
  const url = inject("databaseUrl") ?? process.env.DATABASE_URL;
  if (!url) throw new Error("no database for the lease's tests: set DATABASE_URL, or run them with vitest run here");
  return url;
}

/** A Kysely on a pool of `connections` to the tests' database. */
export function testDb<DB>(connections: number): { db: Kysely<DB>; pool: pg.Pool } {
  const pool = new pg.Pool({ connectionString: testDatabaseUrl(), max: connections });
  return { db: new Kysely<DB>({ dialect: new PostgresDialect({ pool }) }), pool };
}
