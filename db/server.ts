/**
 * Finds the database to use: `DATABASE_URL` when set (nothing is started), otherwise the embedded
 * PostgreSQL under `.lab/`, reused when already running and started as a detached process when not.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";

const root = path.resolve(import.meta.dirname, "..");
const labDir = path.join(root, ".lab");
const dataDir = path.join(labDir, "pgdata");
const port = Number(process.env.EMBEDDED_PG_PORT ?? 54329);
const embeddedServerUrl = `postgres://postgres:postgres@127.0.0.1:${port}`;

/** A URL for `database` on the server in use, creating the database when missing. */
export async function ensureDatabase(database: string): Promise<string> {
  const serverUrl = await ensureDatabaseServer();
  const url = new URL(serverUrl);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
  } finally {
    await admin.end();
  }
  url.pathname = `/${database}`;
  return url.toString();
}

/** Drops and recreates `database`, for tests that start from nothing. */
export async function recreateDatabase(database: string): Promise<string> {
  const serverUrl = await ensureDatabaseServer();
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  return ensureDatabase(database);
}

/** The URL of a server-level database to administer from (`postgres`), starting the embedded one if needed. */
export async function ensureDatabaseServer(): Promise<string> {
  if (process.env.DATABASE_URL) {
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = "/postgres";
    return url.toString();
  }
  const url = `${embeddedServerUrl}/postgres`;
  if (await canConnect(url)) return url;

  mkdirSync(labDir, { recursive: true });
  removeStalePidFile();
  const log = openSync(path.join(labDir, "postgres.log"), "a");
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(root, "db", "postgres-process.ts"), dataDir, String(port)],
    { cwd: root, detached: true, stdio: ["ignore", log, log] },
  );
  child.unref();

  // First start includes initdb; later starts take a second or two.
  for (let waited = 0; waited < 120_000; waited += 250) {
    if (await canConnect(url)) return url;
    if (child.exitCode !== null) break;
    await sleep(250);
  }
  throw new Error(`embedded PostgreSQL did not start on port ${port}; see ${path.join(labDir, "postgres.log")}`);
}

/** Stops the embedded server, if this project started one. */
export async function stopDatabaseServer(): Promise<boolean> {
  const pid = postmasterPid();
  if (pid === null || !isPostgres(pid)) return false;
  process.kill(pid, "SIGINT");
  while (isAlive(pid)) await sleep(100);
  return true;
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function postmasterPid(): number | null {
  const file = path.join(dataDir, "postmaster.pid");
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, "utf8").split("\n")[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/**
 * After a kill, postmaster.pid names a process that is gone, or (pid reuse) a different program, which
 * PostgreSQL would mistake for a running server. Only a live postgres process keeps the file.
 */
function removeStalePidFile(): void {
  const pid = postmasterPid();
  if (pid !== null && !isPostgres(pid)) rmSync(path.join(dataDir, "postmaster.pid"), { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function isPostgres(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("postgres");
  } catch {
    // No /proc (macOS): trust that a live pid is the server.
    return true;
  }
}
