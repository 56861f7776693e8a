/**
 * Step 4 of `npm run bench`, and all of `npm run bench:cpu`: CPU per switch of the six servers, each alone in
 * turn (app-cpu.ts), the lab's client being the already running app's (the lab on). The servers it starts are
 * pushed on `started`, for the caller to stop.
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../db/schema";
import { startApp, type RunningApp } from "../test/harness/app-server";
import { appClient } from "../test/harness/http-client";
import { providerFor } from "../test/harness/provider";
import { appCpu, cpuServer } from "./app-cpu";
import { startNextFixture, startNodeServer, type RunningServer } from "./cpu-servers";
import { appEnv, scalingLatencyMs, type Plan } from "./plan";

const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

interface CpuStepOptions {
  plan: Pick<Plan, "appCpu" | "warmUp">;
  random: () => number;
  progress: (note: string) => void;
}

export async function cpuStep(
  app: RunningApp,
  databaseUrl: string,
  db: Kysely<Database>,
  started: RunningServer[],
  { plan, random, progress }: CpuStepOptions,
) {
  progress("starting the app with the lab off, the switch outside Next.js, next-min, next-bare and bare");
  const options = { databaseUrl, providerUrl: await providerFor(databaseUrl), poolSize: Number(appEnv.DB_POOL_SIZE) };
  await checkRoomForPools(db, 6 * options.poolSize);
  const start = async <T extends RunningServer>(server: Promise<T>) => {
    started.push(await server);
    return started.at(-1) as T;
  };
  const env = { ...appEnv, LAB_ENABLED: "false" };
  const labOff = await start(startApp({ databaseUrl, port: port("BENCH_LAB_OFF_PORT", 3221), env }));
  const outside = await start(
    startNodeServer("switch-outside-next.ts", { ...options, port: port("BENCH_FLOOR_PORT", 3222) }),
  );
  const nextMin = await start(startNextFixture("next-min", { ...options, port: port("BENCH_NEXT_MIN_PORT", 3227) }));
  const nextBare = await start(startNextFixture("next-bare", { ...options, port: port("BENCH_NEXT_BARE_PORT", 3229) }));
  const bare = await start(startNodeServer("bare-server.ts", { ...options, port: port("BENCH_BARE_PORT", 3228) }));
  const servers = [
    cpuServer("lab on", app, true),
    cpuServer("lab off", labOff, true),
    cpuServer("outside Next.js", outside, false),
    cpuServer("next-min", nextMin, false),
    cpuServer("next-bare", nextBare, false),
    cpuServer("bare", bare, false),
  ];
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
  return { appCpu: measured, appCpuConsistent: (await lab.audit()).consistent as boolean };
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
