/**
 * One PostgreSQL node of the replicated shapes (`--replica`): Debian's PostgreSQL 15 (the embedded server has
 * no pg_basebackup), its data in `.lab/pg-<port>/data`, its log in `.lab/pg-<port>/pg-<port>.log`, a child of the
 * launcher on a port of the project's own. As root it runs as the system's `postgres` user (postgresRunner).
 */
import { execFile } from "node:child_process";
import { accessSync, chownSync, constants, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import pg from "pg";
import { onNode } from "./database-cluster";
import {
  killProcessTree,
  PartNotInstalled,
  partDirectory,
  postgresRunner,
  startPart,
  type RunningPart,
} from "./part-process";

const run = promisify(execFile);

/** Where Debian's postgresql-15 puts its programs (PG_BIN_DIR names another PostgreSQL 15 or newer). */
export const postgresBinDir = (): string => process.env.PG_BIN_DIR ?? "/usr/lib/postgresql/15/bin";

type PostgresProgram = "initdb" | "postgres" | "pg_basebackup" | "pg_rewind" | "pg_ctl";

/** The path of one of PostgreSQL's programs, or PartNotInstalled naming postgresql-15. */
export function postgresProgram(name: PostgresProgram): string {
  const file = path.join(postgresBinDir(), name);
  try {
    accessSync(file, constants.X_OK);
    return file;
  } catch {
    throw new PartNotInstalled(name, "postgresql-15");
  }
}

/** The superuser the nodes are made with, as the embedded server's. */
export const superuser = { user: "postgres", password: "postgres" };

/** The settings every node shares (its own port, name and socket are on its command line). */
export const replicationSettings = [
  "wal_level = replica",
  "max_wal_senders = 10",
  "hot_standby = on",
  // A paused standby (the experiments pause it on purpose) finds the WAL it missed still there.
  "wal_keep_size = '256MB'",
  "max_connections = 200",
];

export const nodeUrl = (port: number, database = "postgres"): string =>
  `postgres://${superuser.user}:${superuser.password}@127.0.0.1:${port}/${database}`;

/** The conninfo a standby streams from `port` with (and pg_rewind reads from). */
export const primaryConninfo = (port: number): string =>
  `host=127.0.0.1 port=${port} user=${superuser.user} password=${superuser.password} dbname=postgres`;

export class PostgresNode {
  readonly directory: string;
  readonly dataDir: string;
  private running: RunningPart | null = null;

  constructor(
    readonly name: string,
    readonly port: number,
  ) {
    this.directory = partDirectory(`pg-${port}`);
    this.dataDir = path.join(this.directory, "data");
  }

  url(database = "postgres"): string {
    return nodeUrl(this.port, database);
  }

  get isRunning(): boolean {
    const child = this.running?.process;
    return !!child && child.exitCode === null && child.signalCode === null;
  }

  /** A new cluster (what was there is removed), with the shared settings and `extraSettings`. */
  async initialise(extraSettings: string[]): Promise<void> {
    await this.removeData();
    const passwordFile = path.join(this.directory, "password");
    writeFileSync(passwordFile, `${superuser.password}\n`, { mode: 0o600 });
    this.own(this.directory, passwordFile);
    await this.runProgram("initdb", [
      "-D",
      this.dataDir,
      "-U",
      superuser.user,
      `--pwfile=${passwordFile}`,
      "-A",
      "scram-sha-256",
      // pg_rewind needs either checksums or wal_log_hints: a killed primary rejoins by rewinding.
      "--data-checksums",
      // A fresh lab cluster: its files need not be flushed before the server's own first checkpoint.
      "--no-sync",
    ]);
    rmSync(passwordFile, { force: true });
    const conf = path.join(this.dataDir, "postgresql.conf");
    writeFileSync(
      conf,
      `${readFileSync(conf, "utf8")}\n# Lease Lock Lab\n${[...replicationSettings, ...extraSettings].join("\n")}\n`,
    );
  }

  /** A standby of the node on `primaryPort`: a base backup that streams from it (`pg_basebackup -R`). */
  async cloneFrom(primaryPort: number): Promise<void> {
    await this.removeData();
    this.own(this.directory);
    await this.runProgram("pg_basebackup", [
      "-D",
      this.dataDir,
      "-d",
      primaryConninfo(primaryPort),
      "-R",
      "-X",
      "stream",
      "-c",
      "fast",
    ]);
  }

  /**
   * After this node died or was stopped as a primary: it follows `primaryPort` again, rewound to where the
   * histories forked (`pg_rewind -R`; what it committed past that point is gone), or cloned afresh when a
   * rewind is not possible.
   */
  async rejoinAsStandbyOf(primaryPort: number): Promise<"rewound" | "cloned"> {
    if (this.isRunning) await this.stop();
    this.removeStalePidFile();
    // A primary just promoted still names its old timeline in its control file until its end-of-recovery
    // checkpoint ends (seconds later): pg_rewind, reading it, would find "no rewind required".
    await onNode(nodeUrl(primaryPort), "CHECKPOINT");
    try {
      await this.runProgram("pg_rewind", ["-D", this.dataDir, `--source-server=${primaryConninfo(primaryPort)}`, "-R"]);
      return "rewound";
    } catch (error) {
      console.warn(`[${this.name}] pg_rewind failed, cloning instead: ${String(error).split("\n")[0]}`);
      await this.cloneFrom(primaryPort);
      return "cloned";
    }
  }

  async start(): Promise<void> {
    this.removeStalePidFile();
    this.running = await startPart({
      name: `pg-${this.port}`,
      program: postgresProgram("postgres"),
      args: [
        "-D",
        this.dataDir,
        "-p",
        String(this.port),
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        `unix_socket_directories=${this.directory}`,
        "-c",
        `cluster_name=${this.name}`,
      ],
      port: this.port,
      runAs: postgresRunner(),
      stopSignal: "SIGINT",
      ready: () => this.servesItsOwnData(),
      startLimitMs: 60_000,
    });
  }

  /** Fast shutdown (SIGINT): sessions are ended, and the node stops cleanly. */
  async stop(): Promise<void> {
    await this.running?.stop();
    this.running = null;
  }

  /**
   * The node dies as its machine would: SIGKILL to the postmaster and every process below it (the backends
   * included), no shutdown checkpoint, nothing sent to anyone.
   */
  async kill(): Promise<void> {
    const child = this.running?.process;
    if (!child?.pid || !this.isRunning) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    killProcessTree(child.pid);
    await exited;
    this.running = null;
  }

  /** Ends recovery: this standby becomes a primary on a new timeline (`pg_ctl promote`, waiting for it). */
  async promote(): Promise<void> {
    await this.runProgram("pg_ctl", ["promote", "-w", "-t", "30", "-D", this.dataDir]);
  }

  /** Whether the server on its port answers, and is this node (not another program left on the port). */
  private async servesItsOwnData(): Promise<boolean> {
    const rows = await onNode<{ data_directory: string }>(this.url(), "SHOW data_directory").catch(() => []);
    return rows[0]?.data_directory === this.dataDir;
  }

  /** true: a standby; false: a primary; null: it does not answer. */
  async inRecovery(): Promise<boolean | null> {
    const client = new pg.Client({ connectionString: this.url(), connectionTimeoutMillis: 1_000 });
    client.on("error", () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ standby: boolean }>("SELECT pg_is_in_recovery() AS standby");
      return rows[0]!.standby;
    } catch {
      return null;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  private async runProgram(program: PostgresProgram, args: string[]): Promise<void> {
    await run(postgresProgram(program), args, {
      cwd: this.directory,
      env: { ...process.env, PGPASSWORD: superuser.password },
      ...(postgresRunner() ?? {}),
    });
  }

  private async removeData(): Promise<void> {
    await endLeftoverServer(this.dataDir);
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** The node's directory and files belong to the user that runs it: its data and its socket go there. */
  private own(...files: string[]): void {
    const runner = postgresRunner();
    if (runner) for (const file of files) chownSync(file, runner.uid, runner.gid);
  }

  /** A postmaster.pid left by a killed node names a process that is gone (or a reused pid): it would refuse to start. */
  private removeStalePidFile(): void {
    if (postmasterOf(this.dataDir) === null) rmSync(path.join(this.dataDir, "postmaster.pid"), { force: true });
  }
}

/** The live postmaster of `dataDir` (its postmaster.pid names a running postgres), or null. */
export function postmasterOf(dataDir: string): number | null {
  const file = path.join(dataDir, "postmaster.pid");
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, "utf8").split("\n")[0]);
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("postgres") ? pid : null;
  } catch {
    return null;
  }
}

/** A server an earlier run left running on `dataDir` (its launcher was killed): its data is about to go. */
export async function endLeftoverServer(dataDir: string): Promise<void> {
  const pid = postmasterOf(dataDir);
  if (pid === null) return;
  killProcessTree(pid);
  for (let waited = 0; waited < 5_000 && existsSync(`/proc/${pid}`); waited += 50) await sleep(50);
}

/** Waits until `check` answers true, at most `limitMs`, else fails naming `what`. */
export async function until(what: string, check: () => Promise<boolean>, limitMs: number, everyMs = 50): Promise<void> {
  for (const started = performance.now(); performance.now() - started < limitMs; await sleep(everyMs))
    if (await check()) return;
  throw new Error(`${what}: not within ${limitMs / 1000} s`);
}
