import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { preparingPool } from "../lib/lease/prepared";
import type { Database } from "./schema";

// bigint columns (fences, sequence numbers) stay strings unless asked; counts we convert where read.
export function createDb<DB = Database>(connectionString: string, poolSize = 10): { db: Kysely<DB>; pool: pg.Pool } {
  const pool = new pg.Pool({ connectionString, max: poolSize });
  // An idle client losing its server (a restarted database) must not crash the process.
  pool.on("error", (error) => console.error("[db] idle client error:", error.message));
  return { db: kyselyOn<DB>(pool), pool };
}

/**
 * A typed query builder over an existing pool (one pool can serve two schemas' types). The lease's
 * statements go through it as named prepared statements (lib/lease/prepared.ts): parsed and planned once
 * per connection instead of at every acquisition.
 */
export const kyselyOn = <DB>(pool: pg.Pool): Kysely<DB> =>
  new Kysely<DB>({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) });
