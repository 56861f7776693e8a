/**
 * Starting, finding and stopping the simulated provider's process (provider-process.ts). The project runs
 * it as it runs its database: `npm run dev` and `npm start` reuse the one that answers on IDP_PORT when it
 * keeps its state in the same database, start one that outlives them when none does, and refuse a port
 * another program holds. Tests start one of their own per database, on any free port, that ends with them.
 */
import { spawn } from "node:child_process";
import { mkdirSync, openSync } from "node:fs";
import type { Socket } from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { databaseOf, providerService, type ProviderHealth } from "../provider-sim/health";

const root = path.resolve(import.meta.dirname, "../..");
const entry = path.join(root, "lib", "lab", "provider-process.ts");
const command = [process.execPath, "--import", "tsx", entry] as const;

/** What the provider's process prints, followed by its base URL, once it answers. */
export const readyLine = "[provider] listening on";

/** Who answers at `baseUrl`: the lab's provider (its health), another program, or nobody. */
export async function probeProvider(baseUrl: string): Promise<ProviderHealth | "another program" | "nobody"> {
  try {
    const response = await fetch(`${baseUrl}/lab/health`, { signal: AbortSignal.timeout(2_000) });
    const health = (await response.json().catch(() => null)) as Partial<ProviderHealth> | null;
    return response.ok && health?.service === providerService ? (health as ProviderHealth) : "another program";
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    return code === "ECONNREFUSED" ? "nobody" : "another program";
  }
}

/**
 * For `npm run dev` and `npm start`: the base URL of the provider on `port` for `databaseUrl`, started (as a
 * process that outlives this one, its output in `.lab/provider.log`) when nobody answers there.
 */
export async function ensureProvider(databaseUrl: string, port: number): Promise<string> {
  const baseUrl = `http://127.0.0.1:${port}`;
  const database = databaseOf(databaseUrl);
  const found = await probeProvider(baseUrl);
  if (found === "another program")
    throw new Error(`port ${port} is taken by another program: set IDP_PORT to a free port for the provider`);
  if (found !== "nobody") {
    if (found.database === database) return baseUrl;
    throw new Error(
      `the provider on port ${port} (pid ${found.pid}) keeps its state in ${found.database}, not ${database}: ` +
        "stop it with `npm run provider:stop`, or set IDP_PORT to another port",
    );
  }
  const logFile = path.join(root, ".lab", "provider.log");
  mkdirSync(path.dirname(logFile), { recursive: true });
  const log = openSync(logFile, "a");
  const child = spawn(command[0], command.slice(1), {
    cwd: root,
    detached: true,
    stdio: ["ignore", log, log],
    env: { ...process.env, DATABASE_URL: databaseUrl, IDP_PORT: String(port) },
  });
  child.unref();
  for (let waited = 0; waited < 30_000; waited += 200) {
    const health = await probeProvider(baseUrl);
    if (typeof health === "object" && health.database === database) return baseUrl;
    if (child.exitCode !== null) break;
    await sleep(200);
  }
  throw new Error(`the provider did not start on port ${port}; see ${logFile}`);
}

/** `npm run provider:stop`: stops the provider answering on `port`, if it is the lab's. */
export async function stopProvider(port: number): Promise<boolean> {
  const baseUrl = `http://127.0.0.1:${port}`;
  const found = await probeProvider(baseUrl);
  if (typeof found !== "object") return false;
  process.kill(found.pid, "SIGTERM");
  while ((await probeProvider(baseUrl)) !== "nobody") await sleep(100);
  return true;
}

/**
 * For tests: a provider for `databaseUrl` on a free port, as a child of this process that ends when this
 * process does (however it ends: it watches its standard input). Its output goes to stderr with APP_LOG.
 */
export async function startChildProvider(databaseUrl: string): Promise<string> {
  const child = spawn(command[0], command.slice(1), {
    cwd: root,
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, DATABASE_URL: databaseUrl, IDP_PORT: "0", PROVIDER_EXIT_WITH_PARENT: "1" },
  });
  let output = "";
  let started = false;
  return new Promise((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      if (process.env.APP_LOG) process.stderr.write(chunk);
      if (started) return;
      output += chunk.toString();
      // Whole lines only: a chunk may end inside one.
      const ready = output
        .split("\n")
        .slice(0, -1)
        .find((line) => line.startsWith(`${readyLine} `));
      if (!ready) return;
      started = true;
      // From now on neither the child nor its pipes keep this process alive: its end is the provider's signal.
      child.unref();
      for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as Socket).unref();
      resolve(ready.slice(readyLine.length + 1).trim());
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.once("exit", () => reject(new Error(`the provider did not start:\n${output}`)));
  });
}
