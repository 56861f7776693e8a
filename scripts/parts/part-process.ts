/**
 * A production part (PgBouncer, Redis, HAProxy) as the project runs it: the system's own program, with
 * its configuration and data under `.lab/<name>/`, as a child process on a port of the project's own
 * (never the system's service). The program missing is told in one line, with the command installing it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export const root = path.resolve(import.meta.dirname, "../..");

/** A part asked for is not installed: the message is the whole story (no stack trace to show). */
export class PartNotInstalled extends Error {
  constructor(program: string, debianPackage: string) {
    const sudo = process.getuid?.() === 0 ? "" : "sudo ";
    super(`${program} is not installed. Install it with: ${sudo}apt-get install -y ${debianPackage}`);
  }
}

export interface RunningPart {
  name: string;
  port: number;
  process: ChildProcess;
  /** Ends it (SIGTERM) and waits until it has exited. */
  stop(): Promise<void>;
}

// Debian installs pgbouncer and haproxy in /usr/sbin, which a user's PATH often lacks.
const searchedDirectories = () => [
  ...(process.env.PATH ?? "").split(":").filter(Boolean),
  "/usr/sbin",
  "/usr/local/sbin",
];

/** The path of `program`, or PartNotInstalled. */
export function findProgram(program: string, debianPackage: string): string {
  const found = locateProgram(program);
  if (found === null) throw new PartNotInstalled(program, debianPackage);
  return found;
}

/** The path of `program` on PATH or in the sbin folders, or null. */
export function locateProgram(program: string): string | null {
  for (const directory of searchedDirectories()) {
    const candidate = path.join(directory, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** `.lab/<name>/`, created when missing: the part's configuration, data and log. */
export function partDirectory(name: string): string {
  const directory = path.join(root, ".lab", name);
  mkdirSync(directory, { recursive: true });
  return directory;
}

/**
 * Starts `program args` in the foreground (its output to `.lab/<name>/<name>.log`) and resolves once
 * `port` accepts connections. A process left by an earlier run that was killed (its pid in
 * `.lab/<name>/<name>.pid`) is ended first, so that the port is free again. It runs in a process group of
 * its own, so that a Ctrl-C reaches the app instances only; the launcher stops the parts after them.
 */
export async function startPart(options: {
  name: string;
  program: string;
  args: string[];
  port: number;
}): Promise<RunningPart> {
  const directory = partDirectory(options.name);
  const pidFile = path.join(directory, `${options.name}.pid`);
  await endLeftover(pidFile, options.program);
  const logFile = path.join(directory, `${options.name}.log`);
  const log = openSync(logFile, "a");
  const child = spawn(options.program, options.args, { cwd: directory, stdio: ["ignore", log, log], detached: true });
  if (child.pid) writeFileSync(pidFile, String(child.pid));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  for (let waited = 0; waited < 10_000; waited += 50) {
    if (child.exitCode !== null) break;
    if (await accepts(options.port)) return { name: options.name, port: options.port, process: child, stop };
    await sleep(50);
  }
  await stop();
  const tail = readFileSync(logFile, "utf8").trim().split("\n").slice(-5).join("\n");
  throw new Error(`${options.name} did not start on port ${options.port}; ${logFile} ends with:\n${tail}`);
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function endLeftover(pidFile: string, program: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  rmSync(pidFile, { force: true });
  if (!Number.isInteger(pid) || pid <= 0) return;
  const commandLine = (() => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      return null; // gone
    }
  })();
  if (!commandLine?.includes(path.basename(program))) return; // gone, or the pid was reused by another program
  process.kill(pid, "SIGTERM");
  for (let waited = 0; waited < 5_000 && existsSync(`/proc/${pid}`); waited += 50) await sleep(50);
}
