/**
 * PgBouncer in transaction pooling in front of the lab's PostgreSQL (`--pgbouncer`): the system's
 * pgbouncer, configured under `.lab/pgbouncer-<port>/`, on PGBOUNCER_PORT (6433 unless set, beside a system PgBouncer on 6432).
 */
import { chownSync, writeFileSync } from "node:fs";
import path from "node:path";
import { findProgram, partDirectory, postgresRunner, startPart, type RunningPart } from "./part-process";

export const pgBouncerPort = (): number => Number(process.env.PGBOUNCER_PORT ?? 6433);

export interface RunningPgBouncer extends RunningPart {
  /** `directUrl` with PgBouncer's address in place of PostgreSQL's. */
  pooledUrl(directUrl: string): string;
  /**
   * The environment of an app whose pool goes through this PgBouncer: the pooled URL, the direct one for
   * what needs a session (LISTEN, session locks), and no named prepared statements.
   */
  appEnv(directUrl: string): { DATABASE_URL: string; DATABASE_DIRECT_URL: string; DATABASE_POOLER: "transaction" };
}

/**
 * Starts PgBouncer for every database of the server `directUrl` names. Its settings are the defaults a
 * team meets, stated: `server_lifetime` (an hour) is how long a stranded session lock lasts, and no
 * `ignore_startup_parameters`, so a client sending session settings at startup is refused, as in production.
 */
export async function startPgBouncer(directUrl: string, port = pgBouncerPort()): Promise<RunningPgBouncer> {
  const program = findProgram("pgbouncer", "pgbouncer");
  const server = new URL(directUrl);
  const user = decodeURIComponent(server.username || "postgres");
  const password = decodeURIComponent(server.password);
  // One directory per port: a second PgBouncer (the sweep's, a test's) never takes another for its leftover.
  const directory = partDirectory(`pgbouncer-${port}`);
  const quoted = (value: string) => `"${value.replaceAll('"', '""')}"`;
  const authFile = path.join(directory, "userlist.txt");
  writeFileSync(authFile, `${quoted(user)} ${quoted(password)}\n`, { mode: 0o600 });
  const configFile = path.join(directory, "pgbouncer.ini");
  writeFileSync(
    configFile,
    [
      "[databases]",
      // Any database name, on the lab's server: the app's, the tests' and the bench's alike.
      `* = host=${server.hostname} port=${server.port || 5432}`,
      "",
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = md5",
      `auth_file = ${authFile}`,
      `admin_users = ${user}`,
      "pool_mode = transaction",
      "default_pool_size = 20",
      "max_client_conn = 500",
      "server_lifetime = 3600",
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  // PgBouncer refuses to run as root (a container's user): then it runs as the system's postgres user,
  // as the embedded PostgreSQL does, and the files it reads are that user's.
  const asUser = postgresRunner();
  if (asUser) for (const file of [configFile, authFile]) chownSync(file, asUser.uid, asUser.gid);
  const running = await startPart({
    name: `pgbouncer-${port}`,
    program,
    args: [...(asUser ? ["-u", "postgres"] : []), configFile],
    port,
  });
  const pooledUrl = (url: string) => {
    const pooled = new URL(url);
    pooled.hostname = "127.0.0.1";
    pooled.port = String(port);
    return pooled.toString();
  };
  return {
    ...running,
    pooledUrl,
    appEnv: (url) => ({ DATABASE_URL: pooledUrl(url), DATABASE_DIRECT_URL: url, DATABASE_POOLER: "transaction" }),
  };
}
