/**
 * Step 4 of `npm run bench`, and all of `npm run bench:cpu`: CPU per switch of the six servers (or of those
 * named), each alone in turn (app-cpu.ts), then a lone switch on each, timed as the lone-switch step times the
 * app's, then (where asked) waves on the app and the floors taking turns (floor-waves.ts) at each pool size, and a
 * bystander's reads on the app and next-bare (floor-bystander.ts); the lab's client being the already running
 * app's (the lab on). The servers it starts are pushed on `started`, for the caller to stop.
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../db/schema";
import { startApp, type RunningApp } from "../test/harness/app-server";
import { appClient, type AppClient } from "../test/harness/http-client";
import { providerFor } from "../test/harness/provider";
import {
  appCpu,
  benchCpuServer,
  cpuServerNames,
  loneSwitches,
  warmUp,
  type CpuServer,
  type CpuServerName,
} from "./app-cpu";
import { bystanderFloorNames, floorBystander } from "./floor-bystander";
import { floorServerNames, floorWaves, type FloorLoad } from "./floor-waves";
import { startNextFixture, startNodeServer, type RunningServer } from "./cpu-servers";
import { appEnv, scalingLatencyMs, type Plan } from "./plan";

const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

interface CpuStepOptions {
  plan: Pick<Plan, "appCpu" | "warmUp" | "single">;
  random: () => number;
  progress: (note: string) => void;
  /** The servers measured, all of them unless said (`npm run bench:cpu` with BENCH_CPU_SERVERS). */
  only?: readonly CpuServerName[];
  /**
   * Waves on the app (the lab on), next-bare and bare, those of them measured, taking turns in rounds; at a pool
   * size other than the step's, next-bare and bare are started again with it. `restMs`: each server's resting
   * windows before the storm, whose CPU a click the floors read.
   */
  floorWaves?: { loads: FloorLoad[]; rounds: number; restMs: number };
  /** A bystander's reads on the app and next-bare, at step 2's K, reads and pool size (floor-bystander.ts). */
  floorBystander?: { userCounts: number[]; reads: number; readEveryMs: number; poolSize: number };
}

export async function cpuStep(
  app: RunningApp,
  databaseUrl: string,
  db: Kysely<Database>,
  started: RunningServer[],
  {
    plan,
    random,
    progress,
    only = cpuServerNames,
    floorWaves: floorPlan,
    floorBystander: bystanderPlan,
  }: CpuStepOptions,
) {
  progress(`starting ${only.filter((name) => name !== "lab on").join(", ")}`);
  const options = { databaseUrl, providerUrl: await providerFor(databaseUrl), poolSize: Number(appEnv.DB_POOL_SIZE) };
  const floorPools = [...(floorPlan?.loads ?? []), ...(bystanderPlan ? [bystanderPlan] : [])]
    .map((load) => load.poolSize)
    .filter((size) => size !== options.poolSize);
  await checkRoomForPools(db, only.length * options.poolSize + 2 * Math.max(0, ...floorPools));
  // The lab on is the already running app (the lab's client, whether measured or not); the others start here.
  const starters: Record<CpuServerName, () => Promise<RunningServer>> = {
    "lab on": async () => app,
    "lab off": () =>
      startApp({ databaseUrl, port: port("BENCH_LAB_OFF_PORT", 3221), env: { ...appEnv, LAB_ENABLED: "false" } }),
    "outside Next.js": () =>
      startNodeServer("switch-outside-next.ts", { ...options, port: port("BENCH_FLOOR_PORT", 3222) }),
    "next-min": () => startNextFixture("next-min", { ...options, port: port("BENCH_NEXT_MIN_PORT", 3227) }),
    "next-bare": () => startNextFixture("next-bare", { ...options, port: port("BENCH_NEXT_BARE_PORT", 3229) }),
    bare: () => startNodeServer("bare-server.ts", { ...options, port: port("BENCH_BARE_PORT", 3228) }),
  };
  const servers = [];
  for (const name of only) {
    const server = await starters[name]();
    if (server !== app) started.push(server);
    servers.push(benchCpuServer(name, server));
  }
  const cpuOptions = {
    ...plan.appCpu,
    warmupWaves: plan.warmUp.waves,
    latencyMs: scalingLatencyMs,
    poolSize: 16,
    random,
  };
  const lab = appClient(app.baseUrl);
  const measured = await appCpu(servers, db, lab, cpuOptions, progress);
  // Every server really switched: the app's rows and the provider's accounts still agree.
  const appCpuConsistent = (await lab.audit()).consistent as boolean;
  const lone = await loneSwitches(servers, db, lab, { ...plan.single, poolSize: 16 }, random, progress);
  const floors = servers.filter((each) => (floorServerNames as readonly string[]).includes(each.name));
  const floorsAtPool = floorServersAt(floors, options, { db, lab, started, plan, progress });
  // The step's own pool first (its servers run already), the bystander's last (its servers then serve it too).
  const poolOrder = ({ poolSize }: FloorLoad) =>
    poolSize === options.poolSize ? 0 : poolSize === bystanderPlan?.poolSize ? 2 : 1;
  const floorWaveResults = floorPlan
    ? await floorWaves(
        floorsAtPool,
        db,
        lab,
        {
          ...floorPlan,
          loads: [...floorPlan.loads].sort((a, b) => poolOrder(a) - poolOrder(b)),
          latencyMs: scalingLatencyMs,
          random,
        },
        progress,
      )
    : [];
  const bystanderFloors = bystanderPlan
    ? await floorBystander(
        (await floorsAtPool(bystanderPlan.poolSize)).filter((each) =>
          (bystanderFloorNames as readonly string[]).includes(each.name),
        ),
        db,
        lab,
        { ...bystanderPlan, latencyMs: scalingLatencyMs, warmUp: plan.warmUp, random },
        progress,
      )
    : [];
  return {
    appCpu: measured,
    appCpuConsistent,
    loneSwitches: lone,
    floorWaves: floorWaveResults,
    floorBystander: bystanderFloors,
  };
}

/**
 * The floor servers at a pool size: those already running at the step's; at another, next-bare and bare started
 * again with it (on ports of their own) and warmed up as every server is, the last other pool size's stopped first.
 */
function floorServersAt(
  floors: CpuServer[],
  options: { databaseUrl: string; providerUrl: string; poolSize: number },
  step: {
    db: Kysely<Database>;
    lab: AppClient;
    started: RunningServer[];
    plan: Pick<Plan, "warmUp">;
    progress: (note: string) => void;
  },
) {
  const startersAt = (poolSize: number): Partial<Record<CpuServerName, () => Promise<RunningServer>>> => ({
    "next-bare": () =>
      startNextFixture("next-bare", { ...options, poolSize, port: port("BENCH_OTHER_POOL_NEXT_BARE_PORT", 3211) }),
    bare: () =>
      startNodeServer("bare-server.ts", { ...options, poolSize, port: port("BENCH_OTHER_POOL_BARE_PORT", 3212) }),
  });
  const otherPool: RunningServer[] = [];
  let current = { poolSize: options.poolSize, servers: floors };
  return async (poolSize: number): Promise<CpuServer[]> => {
    if (poolSize === current.poolSize) return current.servers;
    await Promise.all(otherPool.splice(0).map((server) => server.stop()));
    current = { poolSize: options.poolSize, servers: floors };
    if (poolSize === options.poolSize) return floors;
    step.progress(`on the floors: starting next-bare and bare with a pool of ${poolSize}`);
    const starters = startersAt(poolSize);
    const servers: CpuServer[] = [];
    for (const floor of floors) {
      const name = floor.name as CpuServerName;
      const server = await starters[name]?.();
      if (!server) {
        servers.push(floor);
        continue;
      }
      step.started.push(server);
      otherPool.push(server);
      servers.push(benchCpuServer(name, server));
    }
    const startedNow = servers.filter((server) => !floors.includes(server));
    const warmUpOptions = { ...step.plan.warmUp, latencyMs: scalingLatencyMs, poolSize };
    await warmUp(startedNow, step.db, step.lab, warmUpOptions, step.progress);
    return (current = { poolSize, servers }).servers;
  };
}

/**
 * Fails at once, and says why, where the database cannot take every server's pool beside the connections already
 * open: past `max_connections` a server's switches answer 500 ("sorry, too many clients already"). An embedded
 * server started before it allowed 200 (db/postgres-process.ts) takes its new limit once restarted.
 */
async function checkRoomForPools(db: Kysely<Database>, pools: number) {
  const { rows } = await sql<{ allowed: number; open: number }>`
    SELECT current_setting('max_connections')::int AS allowed, (SELECT count(*)::int FROM pg_stat_activity) AS open`.execute(
    db,
  );
  const { allowed, open } = rows[0]!;
  if (open + pools > allowed)
    throw new Error(
      `the database allows ${allowed} connections, ${open} are open and the CPU step's servers may open ${pools} more: ` +
        "restart the embedded one (npm run db:stop) or raise max_connections",
    );
}
