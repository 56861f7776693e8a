import net from "node:net";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { preparingPool } from "./prepared-statements";
import type { Database } from "./schema";

/**
 * How long anything may wait for the database, so that a dead or stalled one gives errors instead of
 * requests that hang. The lab's `transaction` and `advisory` strategies deliberately hold a connection
 * (and an open transaction) for a whole switch, and queue the other requests behind it, so:
 * - connecting: 5 s. A server that is up answers in milliseconds; a dead one refuses at once.
 * - waiting for a pooled connection: 60 s. Those strategies make requests queue for the pool for several
 *   seconds (the tests and the bench: under 10 s); a 50-click burst under `transaction` at the default
 *   latency queues longer, and its tail is refused: an exhausted pool, shown as 503s.
 * - a statement: 60 s, a lock wait: 50 s. The app's own queries take milliseconds; the long waits are the
 *   strategies' row and advisory locks, each waiting for at most (pool size − 1) switches ahead of it.
 *   Lower than the statement's, so a lock wait fails as `lock_not_available`, told apart from a slow query.
 * - idle in a transaction: 180 s. `transaction` and `advisory` sit idle in theirs while the provider
 *   answers, for at most the lease TTL (≤ 120 s); only a leaked transaction lives longer.
 * - an answer: 65 s (`DATABASE_ANSWER_TIMEOUT_MS`), the app's own. A server that is up ends a statement at 60 s,
 *   but not a commit's wait for a synchronous standby (statement_timeout stops before the commit): at 65 s the
 *   statement is cancelled as pg cancels one (a CancelRequest on a connection of its own), which ends that wait as
 *   `CommitNotReplicated`. A server that does not answer 5 s after that cannot be reached (frozen, or the network to
 *   it gone while the connection stays open, which no socket error tells): the connection is closed, its query
 *   fails as a dropped connection's does. Either way the request is a 503, where it waited for ever.
 * The statement's, the lock's and the idle transaction's are the database's settings (`ALTER DATABASE … SET`, see
 * `applyDatabaseTimeouts`), not startup parameters: a transaction pooler (PgBouncer) refuses those (`unsupported
 * startup parameter`), and its server connections must run with the same values as a direct one.
 */
function positiveMs(text: string | undefined): number | undefined {
  const ms = Number(text);
  return Number.isInteger(ms) && ms > 0 ? ms : undefined;
}

export const databaseTimeouts = {
  connectMs: 5_000,
  poolCheckoutMs: 60_000,
  statementMs: 60_000,
  lockMs: 50_000,
  idleInTransactionMs: 180_000,
  answerMs: positiveMs(process.env.DATABASE_ANSWER_TIMEOUT_MS) ?? 65_000,
  /** After a cancel sent for want of an answer: how long the server has to answer it before the connection goes. */
  cancelAnsweredMs: 5_000,
};

/**
 * A commit the primary made whose wait for the synchronous standby was cancelled (a cancel request, an
 * operator's pg_cancel_backend): PostgreSQL answers the statement as a success, with only a WARNING that "the
 * transaction has already committed locally, but might not have been replicated to the standby". It is on
 * the primary and may be gone after a failover, so neither "done" nor "not done" is true: it is answered as
 * query_canceled, a 503 `database-unavailable` that claims neither. (statement_timeout never cancels that
 * wait: PostgreSQL stops the statement's timer before the commit. Measured: failover-sync-keeps-lease.)
 */
export class CommitNotReplicated extends Error {
  readonly code = "57014";

  constructor(readonly warning: string) {
    super(`the commit's wait for the synchronous standby was cancelled: ${warning}`);
    this.name = "CommitNotReplicated";
  }
}

// PostgreSQL's words (SyncRepWaitForLSN) in the C locale the nodes run with; SQLSTATE 01000, a plain warning.
const cancelledSyncWait = (notice: { code?: string; message?: string }) =>
  notice.code === "01000" && /wait for synchronous replication/.test(notice.message ?? "");

// pg-pool uses its `connectionTimeoutMillis` both for the wait for a free connection and for connecting;
// the client's own, shorter, timeout bounds the connecting.
class TimedClient extends pg.Client {
  /** It was refused a write as read-only (25006): it reaches a node that is a standby now. */
  reachesStandby = false;
  /** The warning of a cancelled wait for the standby, sent during the query running now (one at a time). */
  private unreplicated: string | null = null;

  constructor(config?: pg.ClientConfig) {
    super({ ...config, connectionTimeoutMillis: databaseTimeouts.connectMs });
    // A checked-out client (pg-pool listens only on idle ones) losing its server mid-transaction must not
    // crash the process: its queries fail with the error, and the pool drops it when it is released.
    this.on("error", () => undefined);
    this.on("notice", (notice) => {
      if (cancelledSyncWait(notice)) this.unreplicated = `${notice.message}: ${notice.detail ?? ""}`.trim();
    });
    const query = this.query.bind(this) as (...args: unknown[]) => unknown;
    this.query = ((...args: unknown[]) => {
      const result = query(...args);
      if (!(result instanceof Promise)) return result;
      let closing: ReturnType<typeof setTimeout> | undefined;
      const cancelling = setTimeout(() => {
        this.cancelUnanswered();
        closing = setTimeout(() => this.closeUnanswered(), databaseTimeouts.cancelAnsweredMs);
      }, databaseTimeouts.answerMs);
      result
        .catch((error: unknown) => {
          if ((error as { code?: unknown }).code === "25006") this.reachesStandby = true;
        })
        .finally(() => {
          clearTimeout(cancelling);
          clearTimeout(closing);
        });
      // The notice comes before the statement's completion: by now it is this query's.
      return result.then(
        (value: unknown) => {
          const warning = this.takeWarning();
          if (warning) throw new CommitNotReplicated(warning);
          return value;
        },
        (error: unknown) => {
          this.takeWarning();
          throw error;
        },
      );
    }) as typeof this.query;
  }

  /**
   * No answer in time (see `databaseTimeouts.answerMs`): the statement running is cancelled, as `pg` cancels one,
   * by a CancelRequest with this session's key on a connection of its own, which the server closes.
   */
  private cancelUnanswered(): void {
    const { host, port, processID, secretKey } = this as unknown as { processID: number; secretKey: number } & this;
    if (!processID) return;
    const request = Buffer.alloc(16);
    request.writeInt32BE(16, 0);
    request.writeInt32BE(80877102, 4); // the CancelRequest code
    request.writeInt32BE(processID, 8);
    request.writeInt32BE(secretKey, 12);
    const socket = host.startsWith("/") ? net.connect(`${host}/.s.PGSQL.${port}`) : net.connect(port, host);
    socket.setTimeout(databaseTimeouts.cancelAnsweredMs, () => socket.destroy());
    socket.on("error", () => socket.destroy()).on("connect", () => socket.end(request));
  }

  /** No answer to the cancel either: the connection is closed, its queries failing with "Connection terminated…". */
  private closeUnanswered(): void {
    (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  }

  private takeWarning(): string | null {
    const warning = this.unreplicated;
    this.unreplicated = null;
    return warning;
  }
}

/**
 * A pool and its query builder. bigint columns (fences, sequence numbers) stay strings unless asked; counts
 * we convert where read. `synchronousCommit: false` is for writes that may be lost in a database crash:
 * their commits answer before the WAL reaches the disk (a startup parameter: a direct connection only).
 * `namedStatements: false` sends the lease's statements unnamed, as a transaction pooler needs them
 * (db/prepared-statements.ts). `applicationName` names the pool's sessions in `pg_stat_activity`, so that
 * the lab can tell its own connections (its instruments', the simulated provider's) from the app's.
 */
export function createDb<DB = Database>(
  connectionString: string,
  poolSize = 10,
  {
    synchronousCommit = true,
    namedStatements = true,
    applicationName,
  }: { synchronousCommit?: boolean; namedStatements?: boolean; applicationName?: string } = {},
): { db: Kysely<DB>; pool: pg.Pool } {
  const pool = new pg.Pool({
    connectionString,
    ...(applicationName ? { application_name: applicationName } : {}),
    ...(synchronousCommit ? {} : { options: "-c synchronous_commit=off" }),
    max: poolSize,
    Client: TimedClient as unknown as new () => pg.ClientBase,
    connectionTimeoutMillis: databaseTimeouts.poolCheckoutMs,
  });
  // An idle client losing its server (a restarted database) must not crash the process.
  pool.on("error", (error) => console.error("[db] idle client error:", error.message));
  // After a failover, a connection opened before it may still reach the old primary, now a standby (through
  // an address that has moved since): it is closed as it comes back, so the next one reaches the primary.
  // (`end` marks it at once, before the pool decides to keep it.)
  pool.on("release", (_error, client) => {
    if ((client as unknown as TimedClient).reachesStandby) void client.end().catch(() => undefined);
  });
  return {
    db: namedStatements ? kyselyOn<DB>(pool) : new Kysely<DB>({ dialect: new PostgresDialect({ pool }) }),
    pool,
  };
}

/**
 * A typed query builder over an existing pool (one pool can serve two schemas' types). The lease's
 * statements go through it as named prepared statements (db/prepared-statements.ts): parsed and planned once
 * per connection instead of at every acquisition.
 */
export const kyselyOn = <DB>(pool: pg.Pool): Kysely<DB> =>
  new Kysely<DB>({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) });

/**
 * Sets `databaseTimeouts` on the database itself, so that every new session gets them: the app's pool,
 * direct or through a pooler's server connections, and the lab's own connections alike. Run when the
 * database is prepared, before any app instance connects.
 */
export async function applyDatabaseTimeouts<DB>(db: Kysely<DB>): Promise<void> {
  const { rows } = await sql<{ name: string }>`SELECT current_database() AS name`.execute(db);
  const database = sql.id(rows[0]!.name);
  await sql`ALTER DATABASE ${database} SET statement_timeout = ${sql.lit(databaseTimeouts.statementMs)}`.execute(db);
  await sql`ALTER DATABASE ${database} SET lock_timeout = ${sql.lit(databaseTimeouts.lockMs)}`.execute(db);
  await sql`ALTER DATABASE ${database} SET idle_in_transaction_session_timeout = ${sql.lit(databaseTimeouts.idleInTransactionMs)}`.execute(
    db,
  );
}
