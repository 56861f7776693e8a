/** What the Redis experiments read and do on the redis-server itself, apart from the app's client. */
import { setTimeout as pause } from "node:timers/promises";
import { Redis } from "ioredis";
import { config } from "../../core/config";
import { redisAnswers, redisClient, redisLockKey } from "../redis-lock";
import { ada, type Lab } from "./lab";

/** Whether ada's switch lock key exists now. */
export const adaKeyHeld = async (): Promise<boolean> => (await redisClient()!.exists(redisLockKey(ada.userId))) === 1;

/** Polls until ada's key is gone (expired or released), at most `limitMs`; how long that took. */
export async function adaKeyGoneAfter(lab: Lab, limitMs: number): Promise<number> {
  const since = lab.sinceStart();
  while ((await adaKeyHeld().catch(() => true)) && lab.sinceStart() - since < limitMs) await pause(20);
  return lab.sinceStart() - since;
}

/** Polls until ada's key exists (a switch just started has taken it), at most `limitMs`. */
export async function adaKeyTaken(lab: Lab, limitMs: number): Promise<void> {
  const since = lab.sinceStart();
  while (!(await adaKeyHeld()) && lab.sinceStart() - since < limitMs) await pause(10);
}

/**
 * `SHUTDOWN NOSAVE` on a connection of its own, then waits (at most `limitMs`) for the server to answer
 * again: the launcher supervises it like a service and starts it again. Returns how long it was away, or
 * null when it did not come back.
 */
export async function restartRedis(lab: Lab, limitMs: number): Promise<number | null> {
  const killer = new Redis(config.redisUrl, { retryStrategy: () => null, maxRetriesPerRequest: 0 });
  killer.on("error", () => undefined);
  const since = lab.sinceStart();
  await killer.call("SHUTDOWN", "NOSAVE").catch(() => undefined); // the server closes the connection: no answer
  killer.disconnect();
  while (lab.sinceStart() - since < limitMs) {
    if (await redisAnswers(100)) return lab.sinceStart() - since;
    await pause(20);
  }
  return null;
}
