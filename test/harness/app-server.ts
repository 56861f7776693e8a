/**
 * Starts the built app (`next start`) as a real child process on its own port and database, talking to the
 * simulated provider of that database (provider.ts), as the integration, end-to-end and crash tests need
 * it. Needs `npm run build` first.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { nextStartOptions, serverNodeOptions } from "../../scripts/next-start-options";
import { providerFor } from "./provider";

const root = path.resolve(import.meta.dirname, "../..");

export interface RunningApp {
  baseUrl: string;
  process: ChildProcess;
  /** Ends the app gracefully (SIGTERM) and waits for it. */
  stop(): Promise<void>;
  /** Ends the app at once (SIGKILL), as a crash would, and waits for it. */
  kill(): Promise<void>;
}

export async function startApp(options: {
  databaseUrl: string;
  port: number;
  env?: Record<string, string>;
  /** The status `GET /api/users` answers once the app is up: 200, or 503 when it has no database. */
  readyStatus?: number;
  /** Options for node itself, such as the profiler's (which NODE_OPTIONS may not carry). */
  nodeOptions?: string[];
}): Promise<RunningApp> {
  if (!existsSync(path.join(root, ".next", "BUILD_ID")))
    throw new Error("no production build: run `npm run build` first");
  const baseUrl = `http://127.0.0.1:${options.port}`;
  // An app already there (one a timed-out test left) would answer the readiness check below in this one's place.
  if (
    await fetch(`${baseUrl}/api/users`).then(
      () => true,
      () => false,
    )
  )
    throw new Error(`something already answers on ${baseUrl}`);
  // The simulated provider of this database, unless the app is told of another (or of a real one). It is
  // the database's own, reached directly even when the app's pool goes through a pooler, as the launcher
  // runs it: one provider for every instance, whose LISTEN hears the settings' announcements.
  const provider =
    options.env?.SIMULATE_PROVIDER === "false" || options.env?.IDP_BASE_URL
      ? {}
      : { IDP_BASE_URL: await providerFor(options.env?.DATABASE_DIRECT_URL || options.databaseUrl) };
  const child = spawn(
    process.execPath,
    [
      ...serverNodeOptions,
      ...(options.nodeOptions ?? []),
      path.join(root, "node_modules", "next", "dist", "bin", "next"),
      "start",
      "-p",
      String(options.port),
      ...nextStartOptions,
    ],
    {
      cwd: root,
      env: { ...process.env, DATABASE_URL: options.databaseUrl, ...provider, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    if (process.env.APP_LOG) process.stderr.write(chunk);
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  // A test abandoned at its timeout never stops its apps: they end with the process that started them.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  child.once("exit", () => process.off("exit", killOnExit));

  const ended = (signal: NodeJS.Signals) => async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill(signal);
    await exited;
  };
  for (let waited = 0; waited < 60_000; waited += 200) {
    if (child.exitCode !== null) break;
    if (
      await fetch(`${baseUrl}/api/users`).then(
        (response) => response.status === (options.readyStatus ?? 200),
        () => false,
      )
    ) {
      return { baseUrl, process: child, stop: ended("SIGTERM"), kill: ended("SIGKILL") };
    }
    await sleep(200);
  }
  child.kill("SIGKILL");
  throw new Error(`the app did not start on ${baseUrl}:\n${output}`);
}

/** A second instance of the app on the same database, named `peer`, on this worker's peer port. */
export const startPeer = (databaseUrl: string): Promise<RunningApp> =>
  startApp({ databaseUrl, port: Number(process.env.PEER_APP_PORT ?? 3216), env: { APP_INSTANCE: "peer" } });
