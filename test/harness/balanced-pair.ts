/**
 * Two app instances behind the system's HAProxy, round-robin on one public port, as
 * `npm run dev -- --instances 2 --balance --port P` runs them (the instances on the ports after P). With
 * `pgbouncer`, both pools go through it in transaction pooling, as `--pgbouncer` adds.
 */
import { startHaproxy } from "../../scripts/parts/haproxy";
import type { RunningPart } from "../../scripts/parts/part-process";
import type { RunningPgBouncer } from "../../scripts/parts/pgbouncer";
import { startApp, type RunningApp } from "./app-server";
import { appClient, type AppClient } from "./http-client";

export interface BalancedPair {
  balancerUrl: string;
  /** A client of the public port. */
  balanced: AppClient;
  apps: RunningApp[];
  stop(): Promise<void>;
}

export async function startBalancedPair(options: {
  databaseUrl: string;
  balancerPort: number;
  pgbouncer?: RunningPgBouncer;
  /** More environment for both instances (a pool size). */
  env?: Record<string, string>;
}): Promise<BalancedPair> {
  const balancerUrl = `http://127.0.0.1:${options.balancerPort}`;
  const instancePorts = [options.balancerPort + 1, options.balancerPort + 2];
  const urls = instancePorts.map((port) => `http://127.0.0.1:${port}`);
  const starting = await Promise.allSettled(
    instancePorts.map((port, index) =>
      startApp({
        databaseUrl: options.databaseUrl,
        port,
        env: {
          ...options.env,
          ...options.pgbouncer?.appEnv(options.databaseUrl),
          LAB_INSTANCE: String(index + 1),
          LAB_PEER_URLS: urls.filter((_, other) => other !== index).join(","),
          LAB_BALANCER_URL: balancerUrl,
        },
      }),
    ),
  );
  const apps = starting.flatMap((each) => (each.status === "fulfilled" ? [each.value] : []));
  const failed = starting.find((each) => each.status === "rejected");
  if (failed) {
    await Promise.all(apps.map((app) => app.stop()));
    throw failed.reason;
  }
  let haproxy: RunningPart | undefined;
  try {
    haproxy = await startHaproxy(options.balancerPort, instancePorts);
    const balanced = appClient(balancerUrl);
    // The balancer's health checks see both instances up before anything is sent.
    for (let waited = 0; waited < 10_000; waited += 100) {
      const served = await Promise.all(
        [1, 2, 3, 4].map(async () => (await balanced.get("/api/lab/instances")).body.instance),
      );
      if (new Set(served).size === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return {
      balancerUrl,
      balanced,
      apps,
      stop: async () => {
        await haproxy?.stop();
        await Promise.all(apps.map((app) => app.stop()));
      },
    };
  } catch (error) {
    await haproxy?.stop();
    await Promise.all(apps.map((app) => app.stop()));
    throw error;
  }
}
