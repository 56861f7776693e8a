/**
 * The servers `npm run bench` measures beside the app, each a process of its own on the same database and
 * provider: `outside Next.js` (switch-outside-next.ts), `bare` (bare-server.ts), both `node --import tsx`, and
 * `next-min` and `next-bare` (`next start` of the fixture apps in bench/next-min and bench/next-bare, built by
 * `npm run bench`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { nextStartOptions, serverNodeOptions } from "../scripts/next-start-options";
import { assertRunsOnlyItsOwnCode } from "./fixture-own-code";

export interface RunningServer {
  baseUrl: string;
  process: ChildProcess;
  /** Ends it (SIGTERM) and waits for it. */
  stop(): Promise<void>;
}

interface ServerOptions {
  databaseUrl: string;
  providerUrl: string;
  port: number;
  poolSize: number;
  /** Options for node itself, such as the profiler's. */
  nodeOptions?: string[];
}

const root = path.join(import.meta.dirname, "..");

function running(child: ChildProcess, port: number): RunningServer {
  // A server ends with the run that started it; one stopped before frees its listener (the run starts a dozen).
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  child.once("exit", () => process.off("exit", killOnExit));
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

const envOf = (options: ServerOptions) => ({
  ...process.env,
  DATABASE_URL: options.databaseUrl,
  IDP_BASE_URL: options.providerUrl,
  BENCH_SERVER_PORT: String(options.port),
  DB_POOL_SIZE: String(options.poolSize),
});

/** `bare` or `outside Next.js`, on `options.port`; resolves once it listens. */
export async function startNodeServer(
  entry: "bare-server.ts" | "switch-outside-next.ts",
  options: ServerOptions,
): Promise<RunningServer> {
  const child = spawn(
    process.execPath,
    [...serverNodeOptions, ...(options.nodeOptions ?? []), "--import", "tsx", path.join(root, "bench", entry)],
    {
      env: envOf(options),
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    },
  );
  const server = running(child, options.port);
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("exit", (code) => reject(new Error(`${entry} exited (${code}) before it listened`)));
  });
  return server;
}

/** A fixture app, `next-min` or `next-bare`: `next start` of bench/{fixture} on `options.port`; resolves once it answers. */
export async function startNextFixture(
  fixture: "next-min" | "next-bare",
  options: ServerOptions,
): Promise<RunningServer> {
  const directory = path.join(root, "bench", fixture);
  if (!existsSync(path.join(directory, ".next", "BUILD_ID")))
    throw new Error(`${fixture} is not built: \`npm run bench\` builds it (next build bench/${fixture})`);
  assertRunsOnlyItsOwnCode(directory);
  const next = path.join(root, "node_modules", "next", "dist", "bin", "next");
  const child = spawn(
    process.execPath,
    [
      ...serverNodeOptions,
      ...(options.nodeOptions ?? []),
      next,
      "start",
      directory,
      "-p",
      String(options.port),
      ...nextStartOptions,
    ],
    {
      env: envOf(options),
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  const server = running(child, options.port);
  for (let waited = 0; waited < 60_000; waited += 200) {
    if (child.exitCode !== null) throw new Error(`${fixture} exited (${child.exitCode}) before it answered`);
    const answered = await fetch(`${server.baseUrl}/api/users/nobody/primary`, { method: "POST", body: "{}" }).then(
      () => true,
      () => false,
    );
    if (answered) return server;
    await sleep(200);
  }
  await server.stop();
  throw new Error(`${fixture} did not answer within 60 s`);
}
