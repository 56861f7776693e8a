/**
 * K users switching at once, as step 2's waves send them (each wave straight after the last, no pause), on the
 * app under `lease` and on the floors beside it: the least switch in a Next.js route (`next-bare`) and the
 * machine's (`bare`). The servers take turns wave by wave in a seeded order, so each round's waves share the
 * machine's moment: the app's wall time is then a ratio to a floor's, paired round by round (issue 28's
 * "explained by a measured part that is not ours"). The CPU step's own waves are no such floor: each follows a
 * 300 ms settle and the other servers' turns, and its K = 64 walls ran 1.2–1.5× step 2's for the same app.
 */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema";
import type { AppClient } from "../test/harness/http-client";
import { loadName, serverSwitchers, type CpuServer } from "./app-cpu";
import { freshLab } from "./http-load";
import { repeated, shuffled, type Repeated } from "./stats";

export interface FloorWaveResult {
  name: string;
  users: number;
  /** Per round: until all K switches had answered. */
  wallMs: Repeated;
  statuses: Record<string, number>;
  /** After the K's rounds on every server: the app's rows and the provider's accounts agree. */
  consistent: boolean;
}

export async function floorWaves(
  servers: CpuServer[],
  db: Kysely<Database>,
  lab: AppClient,
  options: { userCounts: number[]; rounds: number; latencyMs: number; poolSize: number; random: () => number },
  progress: (note: string) => void,
): Promise<FloorWaveResult[]> {
  const users = await freshLab(lab, db, Math.max(...options.userCounts), {
    strategy: "lease",
    poolSize: options.poolSize,
    latencyMs: options.latencyMs,
  });
  const { wave, statuses } = await serverSwitchers(servers, users);
  const results: FloorWaveResult[] = [];
  for (const userCount of options.userCounts) {
    const load = { users: userCount, switchesEach: 1, readsPageFirst: false, waves: options.rounds };
    const walls = new Map<CpuServer, number[]>(servers.map((server) => [server, []]));
    for (let round = 0; round < options.rounds; round++)
      for (const server of shuffled(servers, options.random)) {
        progress(`K at once on the floors: ${server.name}, K=${userCount}, round ${round + 1}/${options.rounds}`);
        const started = performance.now();
        await wave(server, load);
        walls.get(server)!.push(performance.now() - started);
      }
    const { consistent } = await lab.audit();
    for (const [server, wallMs] of walls)
      results.push({
        name: server.name,
        users: userCount,
        wallMs: repeated(wallMs),
        statuses: statuses.get(`${server.name}|${loadName(load)}`) ?? {},
        consistent,
      });
  }
  return results;
}
