/**
 * What a switch costs the app in CPU, against a floor, in one run (issue: a lean product path). Three servers
 * on one database and one simulated provider process, each measured alone in turn:
 * - `lab on`: `next start` as the demo runs it;
 * - `lab off`: `next start` with LAB_ENABLED=false, the product's path;
 * - `floor`: the product's switch behind a bare `node:http` server (floor-server.ts), no Next.js.
 *
 * CPU is read from /proc for each server's processes only (the provider, the database and this client are
 * other processes), net of the server's own rate at rest, measured first over `restMs`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema";
import { appClient, type AppClient } from "../test/harness/http-client";
import type { BenchUser } from "./bench-users";
import { monotonicMicros } from "./cpu-profile";
import { freshLab } from "./http-load";
import { processCpuMs } from "./process-cpu";
import { repeated, shuffled, type Repeated } from "./stats";

export type CpuServerName = "lab on" | "lab off" | "floor";

export interface CpuServer {
  name: CpuServerName;
  baseUrl: string;
  pid: number;
  /** The Next.js apps check a session cookie; the floor takes none. */
  signsIn: boolean;
}

export interface AppCpuResult {
  name: CpuServerName;
  /** At rest, before any load: CPU time per second of wall time, as % of one core. */
  restingPercentOfCore: number;
  users: number;
  /** Per wave: until all K switches had answered. */
  wallMs: Repeated;
  /** Per wave: the server's CPU time net of its resting rate, divided by K. */
  cpuMsPerSwitch: Repeated;
  statuses: Record<string, number>;
  /** When the measured waves ran, in µs of the monotonic clock (for a CPU profile's samples). */
  window: { fromUs: number; toUs: number };
}

export interface RunningFloor {
  process: ChildProcess;
  /** Ends it (SIGTERM) and waits for it. */
  stop(): Promise<void>;
}

/** Starts the floor server on `port` with a pool of `poolSize`, reaching `providerUrl`; resolves once it listens. */
export async function startFloor(options: {
  databaseUrl: string;
  providerUrl: string;
  port: number;
  poolSize: number;
  nodeOptions?: string[];
}): Promise<RunningFloor> {
  const entry = path.join(import.meta.dirname, "floor-server.ts");
  const child = spawn(process.execPath, [...(options.nodeOptions ?? []), "--import", "tsx", entry], {
    env: {
      ...process.env,
      DATABASE_URL: options.databaseUrl,
      IDP_BASE_URL: options.providerUrl,
      FLOOR_PORT: String(options.port),
      DB_POOL_SIZE: String(options.poolSize),
    },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  process.once("exit", () => child.kill("SIGKILL"));
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("exit", (code) => reject(new Error(`the floor server exited (${code}) before it listened`)));
  });
  return {
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

const settleMs = 300;

/** CPU ms per wall-clock second the server spends with nothing to do. */
async function restingRate(server: CpuServer, restMs: number): Promise<number> {
  const before = processCpuMs(server.pid)!;
  const started = performance.now();
  await sleep(restMs);
  return (processCpuMs(server.pid)! - before) / ((performance.now() - started) / 1000);
}

/**
 * For each server, `waves` waves of K switches sent at the same moment (one per user), the servers taking
 * turns wave by wave in a seeded order, so a drift of the machine falls on all three alike. The users switch
 * back and forth; one record of their primaries is shared, since all three servers change the same rows.
 */
export async function appCpu(
  servers: CpuServer[],
  db: Kysely<Database>,
  lab: AppClient,
  options: {
    users: number;
    waves: number;
    warmupWaves: number;
    latencyMs: number;
    poolSize: number;
    restMs: number;
    random: () => number;
  },
  progress: (note: string) => void,
): Promise<AppCpuResult[]> {
  const users: BenchUser[] = await freshLab(lab, db, options.users, {
    strategy: "lease",
    poolSize: options.poolSize,
    latencyMs: options.latencyMs,
  });
  const primary = users.map((user) => user.identities[0]);
  const clientsOf = new Map<CpuServer, AppClient[]>();
  for (const server of servers) {
    const plain = appClient(server.baseUrl);
    clientsOf.set(
      server,
      await Promise.all(users.map((user) => (server.signsIn ? plain.signedIn(user.id) : Promise.resolve(plain)))),
    );
  }
  const statuses = new Map(servers.map((server) => [server, {} as Record<string, number>]));
  const wave = async (server: CpuServer) => {
    const clients = clientsOf.get(server)!;
    const answers = await Promise.all(
      users.map(async (user, index) => {
        const target = primary[index] === user.identities[0] ? user.identities[1] : user.identities[0];
        const answer = await clients[index]!.promote(user.id, target);
        if (answer.status === 200) primary[index] = target;
        return answer.status;
      }),
    );
    for (const status of answers) statuses.get(server)![status] = (statuses.get(server)![status] ?? 0) + 1;
  };

  // Warm-up: every server's first switches compile, connect and get optimised.
  for (const server of servers) {
    progress(`app CPU: ${server.name}, warming up`);
    for (let i = 0; i < options.warmupWaves; i++) await wave(server);
  }
  const rates = new Map<CpuServer, number>();
  for (const server of servers) {
    progress(`app CPU: ${server.name} at rest for ${options.restMs / 1000} s`);
    rates.set(server, await restingRate(server, options.restMs));
  }
  for (const status of statuses.values()) for (const key of Object.keys(status)) delete status[key];

  const walls = new Map<CpuServer, number[]>(servers.map((server) => [server, []]));
  const cpu = new Map<CpuServer, number[]>(servers.map((server) => [server, []]));
  const fromUs = monotonicMicros();
  for (let round = 0; round < options.waves; round++) {
    for (const server of shuffled(servers, options.random)) {
      progress(`app CPU: ${server.name}, K=${options.users}, wave ${round + 1}/${options.waves}`);
      const cpuBefore = processCpuMs(server.pid)!;
      const started = performance.now();
      await wave(server);
      walls.get(server)!.push(performance.now() - started);
      // What a wave leaves to do after its answers (a lane write, the live stream, a collection) is its cost too.
      await sleep(settleMs);
      const windowMs = performance.now() - started;
      const usedMs = processCpuMs(server.pid)! - cpuBefore - (rates.get(server)! * windowMs) / 1000;
      cpu.get(server)!.push(usedMs / options.users);
    }
  }
  const window = { fromUs, toUs: monotonicMicros() };
  return servers.map((server) => ({
    name: server.name,
    restingPercentOfCore: rates.get(server)! / 10,
    users: options.users,
    wallMs: repeated(walls.get(server)!),
    cpuMsPerSwitch: repeated(cpu.get(server)!),
    statuses: statuses.get(server)!,
    window,
  }));
}
