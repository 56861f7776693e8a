/**
 * A redis-server for the `redis` strategy (`--redis`): the system's redis-server on REDIS_PORT (6380
 * unless set, beside a system Redis on 6379), with its directory under `.lab/redis-<port>/`. No persistence, as a
 * cache is often run: a restart forgets every key, the locks among them (redis-restart-loses-lock).
 * Supervised like a service: when it exits (`SHUTDOWN NOSAVE`, a crash), it is started again.
 */
import { findProgram, partDirectory, startPart, type RunningPart } from "./part-process";

export const redisPort = (): number => Number(process.env.REDIS_PORT ?? 6380);

export interface RunningRedis {
  url: string;
  /** Ends it for good, not to be started again. */
  stop(): Promise<void>;
}

export async function startRedis(port = redisPort()): Promise<RunningRedis> {
  const program = findProgram("redis-server", "redis-server");
  // One directory per port: two labs on one machine (the verdict sweep) each run their own.
  const directory = partDirectory(`redis-${port}`);
  const start = () =>
    startPart({
      name: `redis-${port}`,
      program,
      args: ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory],
      port,
    });
  let stopping = false;
  let current: RunningPart = await start();
  const superviseAfterExit = (running: RunningPart) =>
    running.process.once("exit", () => {
      if (stopping) return;
      console.log("[redis] redis-server exited; starting it again (its keys are gone: no persistence)");
      start().then(
        (again) => {
          current = again;
          superviseAfterExit(again);
        },
        (error: unknown) => console.error(`[redis] could not start it again: ${String(error)}`),
      );
    });
  superviseAfterExit(current);
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      stopping = true;
      await current.stop();
    },
  };
}
