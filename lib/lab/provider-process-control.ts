/**
 * Starting, finding and stopping the simulated provider's process (provider-process.ts). The project runs
 * it as it runs its database: `npm run dev` and `npm start` reuse the one that answers on IDP_PORT when it
 * keeps its state in the same database, start one that outlives them when none does (recorded in
 * `.lab/provider.json`, so that `npm run provider:stop` stops only this checkout's), start this checkout's again
 * when it runs older code (left running from before a pull), and refuse a port another program holds. Tests start
 * one of their own per database, on any free port, that ends with them.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Socket } from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { databaseOf, providerService, type ProviderHealth } from "../provider-sim/health";

const root = path.resolve(import.meta.dirname, "../..");
const entry = path.join(root, "lib", "lab", "provider-process.ts");
const command = [process.execPath, "--import", "tsx", entry] as const;
/** This checkout's `.lab/`: the record of the provider it started, and that provider's log. */
const checkoutLab = path.join(root, ".lab");

/** The provider a checkout started: which process, on which port, for which database. */
export interface ProviderRecord {
  pid: number;
  port: number;
  database: string;
}

/**
 * A digest of the code a provider started now would run: every source file of `lib/` and `db/` (tests left out),
 * its path and its text. A provider reports the one it started with.
 */
export function sourceDigest(): string {
  const hash = createHash("sha256");
  for (const folder of ["lib", "db"]) {
    const files = readdirSync(path.join(root, folder), { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts") && !file.includes(".test."))
      .sort();
    for (const file of files) hash.update(`${folder}/${file}\0`).update(readFileSync(path.join(root, folder, file)));
  }
  return hash.digest("hex").slice(0, 16);
}

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
 * process that outlives this one, its output in `<lab>/provider.log`, recorded in `<lab>/provider.json`) when
 * nobody answers there. `lab` is the checkout's `.lab/` (a test names another). `stateUrl`: where it keeps its
 * state when not in `databaseUrl` (the replicated shapes: on a database that does not fail over with the lab's).
 */
export async function ensureProvider(
  databaseUrl: string,
  port: number,
  lab = checkoutLab,
  stateUrl = databaseUrl,
): Promise<string> {
  const baseUrl = `http://127.0.0.1:${port}`;
  const database = databaseOf(stateUrl);
  const found = await probeProvider(baseUrl);
  if (found === "another program")
    throw new Error(`port ${port} is taken by another program: set IDP_PORT to a free port for the provider`);
  if (found !== "nobody") {
    if (found.database !== database)
      throw new Error(
        `the provider on port ${port} (pid ${found.pid}) keeps its state in ${found.database}, not ${database}: ` +
          "stop it with `npm run provider:stop`, or set IDP_PORT to another port",
      );
    if (found.code === sourceDigest()) return baseUrl;
    // Its state is in the database: a provider started again carries on from it.
    if ((await stopProvider(lab))?.pid !== found.pid)
      throw new Error(
        `the provider on port ${port} (pid ${found.pid}) runs other code than this checkout's, and this checkout ` +
          "did not start it: stop it from the checkout that did (`npm run provider:stop`), or set IDP_PORT to another port",
      );
    console.log(`[provider] the one on port ${port} ran older code: started again`);
  }
  const logFile = path.join(lab, "provider.log");
  mkdirSync(lab, { recursive: true });
  const log = openSync(logFile, "a");
  const child = spawn(command[0], command.slice(1), {
    cwd: root,
    detached: true,
    stdio: ["ignore", log, log],
    env: { ...process.env, ...providerDatabases(databaseUrl, stateUrl), IDP_PORT: String(port) },
  });
  child.unref();
  for (let waited = 0; waited < 30_000; waited += 200) {
    const health = await probeProvider(baseUrl);
    if (typeof health === "object" && health.database === database) {
      const record: ProviderRecord = { pid: health.pid, port, database };
      writeFileSync(recordFile(lab), `${JSON.stringify(record)}\n`);
      return baseUrl;
    }
    if (child.exitCode !== null) break;
    await sleep(200);
  }
  throw new Error(`the provider did not start on port ${port}; see ${logFile}`);
}

/** The provider process's databases: the lab's (its settings), and its state's when elsewhere. */
const providerDatabases = (databaseUrl: string, stateUrl: string) => ({
  DATABASE_URL: databaseUrl,
  PROVIDER_DATABASE_URL: stateUrl === databaseUrl ? "" : stateUrl,
});

/**
 * `npm run provider:stop`: stops the provider this checkout started (`ensureProvider`'s record in `lab`),
 * if it still answers where it was started, and answers its record; null when none of this checkout's runs.
 * A provider that another checkout started is never stopped, whatever port it answers on.
 */
export async function stopProvider(lab = checkoutLab): Promise<ProviderRecord | null> {
  const record = readRecord(lab);
  if (!record) return null;
  const baseUrl = `http://127.0.0.1:${record.port}`;
  const found = await probeProvider(baseUrl);
  const isRecorded = typeof found === "object" && found.pid === record.pid && found.database === record.database;
  if (isRecorded) {
    process.kill(record.pid, "SIGTERM");
    while ((await probeProvider(baseUrl)) !== "nobody") await sleep(100);
  }
  rmSync(recordFile(lab), { force: true });
  return isRecorded ? record : null;
}

const recordFile = (lab: string) => path.join(lab, "provider.json");

function readRecord(lab: string): ProviderRecord | null {
  try {
    return JSON.parse(readFileSync(recordFile(lab), "utf8")) as ProviderRecord;
  } catch {
    return null;
  }
}

/**
 * For tests: a provider for `databaseUrl` on a free port, as a child of this process that ends when this
 * process does (however it ends: it watches its standard input). Its output goes to stderr with APP_LOG.
 */
export async function startChildProvider(databaseUrl: string, stateUrl = databaseUrl): Promise<string> {
  const child = spawn(command[0], command.slice(1), {
    cwd: root,
    stdio: ["pipe", "pipe", "pipe"],
    env: {
      ...process.env,
      ...providerDatabases(databaseUrl, stateUrl),
      IDP_PORT: "0",
      PROVIDER_EXIT_WITH_PARENT: "1",
    },
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
