/**
 * A bystander's reads while K users switch, as step 2 measures them (http-load.ts's `bystanderReads`: one read
 * every 20 ms, open loop, K users switching without pause), on the app (the lab on, `lease`) and on next-bare
 * (its read route: one statement in a Next.js route handler, on the same pool as its switches), both at step 2's
 * pool size, the two taking turns load by load in a seeded order, idle before the loads and after. next-bare's
 * reads wait for what its own switches take of the event loop, Next.js's and the machine's: how far its read p99
 * passes the target (2× its idle) is the floor the app's is judged against, in the same run (issue 28's
 * "explained by a measured part that is not ours").
 */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema";
import { appClient, type AppClient } from "../test/harness/http-client";
import { loadName, serverSwitchers, type CpuServer } from "./app-cpu";
import { freshLab, readsWhileSwitching } from "./http-load";
import { shuffled, type Distribution } from "./stats";

/** The app, and the floor it is paired with. */
export const bystanderFloorNames = ["lab on", "next-bare"] as const;

export interface FloorBystanderResult {
  name: string;
  /** K users switching meanwhile; 0: idle. */
  users: number;
  poolSize: number;
  reads: Distribution;
  /** The bystander's reads' answers (all 200). */
  readStatuses: Record<string, number>;
  /** The K users' switches' answers (all 200: each user switches alone). */
  statuses: Record<string, number>;
  /** After all the loads on both (one audit, the same on every row): the app's rows and the provider's accounts agree. */
  consistent: boolean;
}

export async function floorBystander(
  servers: CpuServer[],
  db: Kysely<Database>,
  lab: AppClient,
  options: {
    userCounts: number[];
    reads: number;
    readEveryMs: number;
    latencyMs: number;
    poolSize: number;
    /** Reads at once, and how many times, before any is measured: as every server's switches are warmed up. */
    warmUp: { users: number; waves: number };
    random: () => number;
  },
  progress: (note: string) => void,
): Promise<FloorBystanderResult[]> {
  const { poolSize, latencyMs } = options;
  const users = await freshLab(lab, db, Math.max(1, ...options.userCounts), { strategy: "lease", poolSize, latencyMs });
  const { switchOnce, statuses } = await serverSwitchers(servers, users);
  // alan never switches; the app reads his page with his session, next-bare with none (it checks none).
  const readers = new Map<CpuServer, AppClient>();
  for (const server of servers) {
    const plain = appClient(server.baseUrl);
    const reader = server.isTheApp ? await plain.signedIn("alan") : plain;
    progress(`bystander on the floors: ${server.name}, warming up its reads`);
    for (let wave = 0; wave < options.warmUp.waves; wave++)
      await Promise.all(Array.from({ length: options.warmUp.users }, () => reader.get("/api/users/alan")));
    readers.set(server, reader);
  }
  const results: Omit<FloorBystanderResult, "consistent">[] = [];
  for (const userCount of [0, ...options.userCounts, 0])
    for (const server of shuffled(servers, options.random)) {
      progress(`bystander on the floors: ${server.name}, K=${userCount} P=${poolSize}`);
      const load = { users: userCount, switchesEach: 1, readsPageFirst: false, waves: 1 };
      const reader = readers.get(server)!;
      const { times, statuses: readStatuses } = await readsWhileSwitching(
        () => reader.get("/api/users/alan"),
        (index) => switchOnce(server, load, index),
        { ...options, users: userCount },
      );
      const answers = statuses.get(`${server.name}|${loadName(load)}`) ?? {};
      results.push({
        name: server.name,
        users: userCount,
        poolSize,
        reads: times,
        readStatuses,
        statuses: { ...answers },
      });
    }
  const { consistent } = await lab.audit();
  return results.map((result) => ({ ...result, consistent }));
}
