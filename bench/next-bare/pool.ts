/** next-bare's one pool, as the app has one: its switches and its reads queue for the same connections. */
import pg from "pg";

export const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_SIZE ?? 16),
});
