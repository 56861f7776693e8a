/**
 * The production parts a launch asks for (`--pgbouncer`, `--redis`, `--balance`), started before the app
 * instances, and what the instances are told about them (environment variables).
 */
import { startHaproxy } from "./haproxy";
import { findProgram } from "./part-process";
import { startPgBouncer } from "./pgbouncer";
import { startRedis } from "./redis";

export interface PartsAsked {
  pgbouncer: boolean;
  redis: boolean;
  balance: boolean;
}

export interface StartedParts {
  /** For every app instance. */
  appEnv: Record<string, string>;
  stop(): Promise<void>;
}

/** Every program asked for is installed, or PartNotInstalled for the first that is not (before anything starts). */
export function checkInstalled(asked: PartsAsked): void {
  if (asked.pgbouncer) findProgram("pgbouncer", "pgbouncer");
  if (asked.redis) findProgram("redis-server", "redis-server");
  if (asked.balance) findProgram("haproxy", "haproxy");
}

export async function startParts(
  asked: PartsAsked,
  { directUrl, balancerPort, instancePorts }: { directUrl: string; balancerPort: number; instancePorts: number[] },
): Promise<StartedParts> {
  const appEnv: Record<string, string> = { DATABASE_URL: directUrl };
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => void (await Promise.all(stops.map((each) => each())));
  try {
    if (asked.pgbouncer) {
      const pgbouncer = await startPgBouncer(directUrl);
      stops.push(pgbouncer.stop);
      Object.assign(appEnv, pgbouncer.appEnv(directUrl));
      console.log(`[launch] PgBouncer (transaction pooling) on port ${pgbouncer.port}: the app's pools go through it`);
    }
    if (asked.redis) {
      const redis = await startRedis();
      stops.push(redis.stop);
      appEnv.REDIS_URL = redis.url;
      console.log(`[launch] redis-server (no persistence) at ${redis.url}`);
    }
    if (asked.balance) {
      const haproxy = await startHaproxy(balancerPort, instancePorts);
      stops.push(haproxy.stop);
      appEnv.LAB_BALANCER_URL = `http://localhost:${balancerPort}`;
      console.log(`[launch] HAProxy round-robin on http://localhost:${balancerPort}`);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { appEnv, stop };
}
