import type { Kysely } from "kysely";
import type pg from "pg";
import { createDb } from "../../db/connection";
import type { Database } from "../../db/schema";
import { config } from "./config";
import { processSingleton } from "./process-singleton";

interface AppDatabase {
  db: Kysely<Database>;
  pool: pg.Pool;
  /** Who hears of the pool's changes (onPoolChange), and the call that tells them; once someone asks. */
  poolWatch?: PoolWatch;
}

/** The process's one pool, opened at the first use. */
export function appDatabase(): AppDatabase {
  return processSingleton("Db", () => {
    if (!config.databaseUrl)
      throw new Error("DATABASE_URL is not set: start the app with `npm run dev` or `npm start`");
    const database = createDb(config.databaseUrl, config.poolSize, { namedStatements: !config.transactionPooler });
    // After a shrink, a connection that was busy is closed when it comes back, not kept idle past the size.
    database.pool.on("release", () => {
      if (database.pool.totalCount > database.pool.options.max) setImmediate(() => void closeSurplus(database.pool));
    });
    return database;
  });
}

export const appDb = (): Kysely<Database> => appDatabase().db;

/**
 * Calls `listener` after this instance's pool may have changed, once per turn of the event loop however
 * many changes it held: a checkout asked for (it may queue), a connection opened, handed out, returned or
 * closed, the size changed. Returns the unsubscribe.
 */
export function onPoolChange(listener: () => void): () => void {
  const database = appDatabase();
  const { listeners } = (database.poolWatch ??= watchPool(database.pool));
  listeners.add(listener);
  return () => listeners.delete(listener);
}

interface PoolWatch {
  listeners: Set<() => void>;
  changed(): void;
}

function watchPool(pool: pg.Pool): PoolWatch {
  const listeners = new Set<() => void>();
  let due = false;
  const changed = () => {
    if (due) return;
    due = true;
    setImmediate(() => {
      due = false;
      for (const listener of listeners) listener();
    });
  };
  // pg-pool emits no event when a checkout has to queue, nor when a queued one times out or a new
  // connection fails: the checkout is watched where it starts and where it ends, in either of its forms.
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  pool.connect = ((...args: unknown[]) => {
    const [callback] = args;
    const result =
      typeof callback === "function"
        ? connect((...answer: unknown[]) => {
            changed();
            return (callback as (...inner: unknown[]) => unknown)(...answer);
          })
        : connect();
    if (result instanceof Promise) result.then(changed, changed);
    changed();
    return result;
  }) as typeof pool.connect;
  for (const event of ["connect", "acquire", "release", "remove"] as const) pool.on(event, changed);
  return { listeners, changed };
}

export interface PoolStats {
  size: number;
  total: number;
  idle: number;
  inUse: number;
  waiting: number;
}

/** This instance's pool, live: what `transaction` and `advisory` exhaust and `lease` does not. */
export function poolStats(): PoolStats {
  const { pool } = appDatabase();
  return {
    size: pool.options.max,
    total: pool.totalCount,
    idle: pool.idleCount,
    inUse: pool.totalCount - pool.idleCount,
    waiting: pool.waitingCount,
  };
}

/**
 * Applies the lab's pool size to this instance: pg-pool reads its `max` at every checkout; on a shrink,
 * idle connections beyond it are closed now (taken from the pool and destroyed), busy ones when returned.
 */
export async function applyPoolSize(size: number): Promise<void> {
  const { pool, poolWatch } = appDatabase();
  pool.options.max = size;
  // pg-pool announces no change of its size.
  poolWatch?.changed();
  await closeSurplus(pool);
}

async function closeSurplus(pool: pg.Pool): Promise<void> {
  for (let surplus = Math.min(pool.totalCount - pool.options.max, pool.idleCount); surplus > 0; surplus--) {
    const client = await pool.connect();
    client.release(true);
  }
}
