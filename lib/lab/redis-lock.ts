/**
 * The lock most teams reach for: a Redis key per user, taken with `SET key token NX PX ttl` and released
 * by a script that deletes it only while it still holds this holder's token (Redis's documented pattern).
 * It holds no database connection. It has no fence: the token says who holds the key now, not which
 * holder came later, so a third party cannot refuse a late write with it. Redis runs only when the lab is
 * started with `--redis` (REDIS_URL); without it the strategy answers 503 and says so.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { config } from "../core/config";
import { processSingleton } from "../core/process-singleton";
import { Problem } from "../core/problems";

/** One client per process, reconnecting on its own; commands fail at once while it is not connected. */
export function redisClient(): Redis | null {
  const { redisUrl } = config;
  if (!redisUrl) return null;
  return processSingleton("Redis", () => {
    const client = new Redis(redisUrl, {
      lazyConnect: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 1_000,
      retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
    });
    // Reconnection is the client's job; an error event without a listener would crash the process.
    client.on("error", () => undefined);
    return client;
  });
}

export class RedisUnavailable extends Problem {
  constructor(reason: string) {
    super(
      503,
      "redis-unavailable",
      "Redis is not available",
      `The redis strategy needs a redis-server (start the lab with npm run dev -- --redis): ${reason}.`,
      {},
      { "Retry-After": "1" },
    );
  }
}

/** Whether a redis-server answers this instance now (at most `waitMs`, for a client still connecting). */
export async function redisAnswers(waitMs = 1_000): Promise<boolean> {
  const client = redisClient();
  if (!client) return false;
  if (client.status !== "ready") {
    await new Promise<void>((resolve) => {
      const ready = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        client.off("ready", ready);
        resolve();
      }, waitMs);
      client.once("ready", ready);
    });
  }
  return client.ping().then(
    (answer) => answer === "PONG",
    () => false,
  );
}

/** The key of a user's switch lock. */
export const redisLockKey = (userId: string): string => `lab:switch-lock:${userId}`;

/** Deletes the key only if it still holds `token`: 1 when it did, 0 when another holder's (or nobody's). */
const releaseScript = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

export type RedisAcquisition = { acquired: true; token: string } | { acquired: false; remainingMs: number };

export async function acquireRedisLock(key: string, ttlMs: number): Promise<RedisAcquisition> {
  const client = await connected();
  const token = randomUUID();
  try {
    if ((await client.set(key, token, "PX", ttlMs, "NX")) === "OK") return { acquired: true, token };
    return { acquired: false, remainingMs: Math.max(0, await client.pttl(key)) };
  } catch (error) {
    throw new RedisUnavailable(error instanceof Error ? error.message : String(error));
  }
}

/** True when this holder's key was deleted; false when it had expired, or the key is another holder's. */
export async function releaseRedisLock(key: string, token: string): Promise<boolean> {
  return (await (await connected()).eval(releaseScript, 1, key, token)) === 1;
}

/** The client, once connected (it may still be, at the first command, or again, after a restart). */
async function connected(): Promise<Redis> {
  const client = redisClient();
  if (!client) throw new RedisUnavailable("this instance was started without one (REDIS_URL is not set)");
  if (client.status !== "ready" && !(await redisAnswers(1_000)))
    throw new RedisUnavailable(`no answer from ${config.redisUrl}`);
  return client;
}
