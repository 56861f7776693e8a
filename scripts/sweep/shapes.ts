/**
 * The start shapes the verdict sweep runs the experiments in, each as `npm run dev` starts it: plain, with
 * `--pgbouncer` (the app's pool through PgBouncer in transaction pooling), with `--redis`, and with
 * `--instances 2 --balance` (two instances behind HAProxy, the runs sent to the balancer as a page's are).
 * One lab per database: its simulated provider, the shape's parts, its app instance(s).
 */
import { startPgBouncer, type RunningPgBouncer } from "../parts/pgbouncer";
import { startRedis } from "../parts/redis";
import { startApp } from "../../test/harness/app-server";
import { startBalancedPair } from "../../test/harness/balanced-pair";
import { appClient, type AppClient } from "../../test/harness/http-client";

export const shapes = ["plain", "pgbouncer", "redis", "balance"] as const;
export type Shape = (typeof shapes)[number];

/** How a teacher starts the lab in each shape. */
export const startCommands: Record<Shape, string> = {
  plain: "npm run dev",
  pgbouncer: "npm run dev -- --pgbouncer",
  redis: "npm run dev -- --redis",
  balance: "npm run dev -- --instances 2 --balance",
};

export interface ShapeLab {
  /** Where the runs are sent: the instance, or the balancer in front of two. */
  client: AppClient;
  stop(): Promise<void>;
}

/** What the labs of one shape share: PgBouncer serves every database of the embedded server. */
export interface SharedParts {
  pgbouncer?: RunningPgBouncer;
  stop(): Promise<void>;
}

export async function startSharedParts(shape: Shape, directUrl: string, pgbouncerPort: number): Promise<SharedParts> {
  if (shape !== "pgbouncer") return { stop: async () => undefined };
  const pgbouncer = await startPgBouncer(directUrl, pgbouncerPort);
  return { pgbouncer, stop: () => pgbouncer.stop() };
}

/**
 * Lab `index` of `shape` on `databaseUrl`, on the ports from `portBase` (10 a lab): the balancer's first, then
 * the instances', then redis-server's at +5.
 */
export async function startShapeLab(
  shape: Shape,
  index: number,
  databaseUrl: string,
  portBase: number,
  shared: SharedParts,
): Promise<ShapeLab> {
  const base = portBase + 10 * index;
  const instance = `sweep-${shape}-${index}`;
  if (shape === "balance") {
    const pair = await startBalancedPair({ databaseUrl, balancerPort: base });
    return { client: pair.balanced, stop: pair.stop };
  }
  if (shape === "redis") {
    const redis = await startRedis(base + 5);
    const app = await startApp({ databaseUrl, port: base + 1, env: { REDIS_URL: redis.url, LAB_INSTANCE: instance } });
    return {
      client: appClient(app.baseUrl),
      stop: async () => {
        await app.stop();
        await redis.stop();
      },
    };
  }
  const pooled = shape === "pgbouncer" ? shared.pgbouncer!.appEnv(databaseUrl) : undefined;
  const app = await startApp({
    databaseUrl: pooled?.DATABASE_URL ?? databaseUrl,
    port: base + 1,
    env: { ...pooled, LAB_INSTANCE: instance },
  });
  return { client: appClient(app.baseUrl), stop: () => app.stop() };
}
