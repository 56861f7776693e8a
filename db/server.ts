/**
 * Finds the database to use: `DATABASE_URL` when set (nothing is started), otherwise this checkout's
 * embedded PostgreSQL under `.lab/`, reused when already running and started as a detached process when not.
 * A server on the port that is not this checkout's (another clone's, a system PostgreSQL) is never used.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";

const root = path.resolve(import.meta.dirname, "..");
const labDir = path.join(root, ".lab");
const dataDir = path.join(labDir, "pgdata");
/** The port this checkout's server was last started on, so that every later start finds it there. */
const portFile = path.join(labDir, "pgport");
const defaultPort = 54329;
const serverUrl = (port: number) => `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;

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

/** A start under way in this process: callers at once (a set-up preparing several databases) share it. */
let starting: Promise<string> | undefined;

/** The URL of a server-level database to administer from (`postgres`), starting the embedded one if needed. */
export async function ensureDatabaseServer(): Promise<string> {
  if (process.env.DATABASE_URL) {
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = "/postgres";
    return url.toString();
  }
  starting ??= embeddedServer().finally(() => (starting = undefined));
  return starting;
}

async function embeddedServer(): Promise<string> {
  const asked = process.env.EMBEDDED_PG_PORT ? Number(process.env.EMBEDDED_PG_PORT) : null;
  const running = runningServerPort();
  if (running !== null) {
    if (asked !== null && asked !== running)
      throw new Error(
        `this checkout's embedded PostgreSQL runs on port ${running}, not EMBEDDED_PG_PORT=${asked}: ` +
          "unset EMBEDDED_PG_PORT, or stop it first (npm run db:stop)",
      );
    if (await canConnect(serverUrl(running))) return serverUrl(running);
  }

  // Another process of this checkout may be starting it on the asked port right now (two test projects'
  // set-ups at once): its server is waited for before the port is called someone else's.
  if (asked !== null && (await portInUse(asked))) {
    const started = await startedMeanwhile(asked);
    if (started) return started;
  }
  mkdirSync(labDir, { recursive: true });
  removeStalePidFile();
  const port = await portToStartOn(asked);
  const log = openSync(path.join(labDir, "postgres.log"), "a");
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(root, "db", "postgres-process.ts"), dataDir, String(port)],
    { cwd: root, detached: true, stdio: ["ignore", log, log] },
  );
  child.unref();

  // First start includes initdb; later starts take a second or two. A child that gives up may have lost
  // to another process of this checkout starting the same server: its server is waited for a while.
  let childEndedAt: number | null = null;
  for (let waited = 0; waited < 120_000; waited += 250) {
    const running = runningServerPort();
    if (running !== null && (await canConnect(serverUrl(running)))) return serverUrl(running);
    if (child.exitCode !== null) childEndedAt ??= waited;
    if (childEndedAt !== null && waited - childEndedAt > 20_000) break;
    await sleep(250);
  }
  throw new Error(`embedded PostgreSQL did not start on port ${port}; see ${path.join(labDir, "postgres.log")}`);
}

/** This checkout's server, once it answers on `port` within 20 s; null if it does not. */
async function startedMeanwhile(port: number): Promise<string | null> {
  for (let waited = 0; waited < 20_000; waited += 250) {
    if (runningServerPort() === port && (await canConnect(serverUrl(port)))) return serverUrl(port);
    await sleep(250);
  }
  return null;
}

/** The port this checkout's own server listens on, from its postmaster.pid (4th line); null if none runs. */
function runningServerPort(): number | null {
  const pid = postmasterPid();
  if (pid === null || !isPostgres(pid)) return null;
  const port = Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[3]);
  return Number.isInteger(port) && port > 0 ? port : null;
}

/**
 * EMBEDDED_PG_PORT when set, and it must be free; otherwise the port this checkout used last (or 54329), or
 * when something else holds it (a second checkout's server), the next free one, remembered in `.lab/pgport`.
 */
async function portToStartOn(asked: number | null): Promise<number> {
  if (asked !== null) {
    if (await portInUse(asked))
      throw new Error(
        `EMBEDDED_PG_PORT=${asked} is taken by another program (another checkout's PostgreSQL?): choose a free port`,
      );
    return asked;
  }
  const remembered = existsSync(portFile) ? Number(readFileSync(portFile, "utf8")) : defaultPort;
  const preferred = Number.isInteger(remembered) && remembered > 0 ? remembered : defaultPort;
  let port = preferred;
  while (await portInUse(port)) port += 1;
  if (port !== preferred)
    console.log(`[db] port ${preferred} is taken by another program: this checkout's PostgreSQL uses ${port}`);
  writeFileSync(portFile, `${port}\n`);
  return port;
}

/** Whether anything accepts connections on the loopback port. */
function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
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
