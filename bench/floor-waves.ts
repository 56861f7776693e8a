/**
 * K users switching at once, as step 2's waves send them, and 30 clicks at once from one user, as step 3's storm
 * sends them, on the app under `lease` and on the floors beside it: the least switch in a Next.js route
 * (`next-bare`) and the machine's (`bare`). The servers take turns wave by wave in a seeded order, so each round's
 * waves share the machine's moment: the app's wall time is then a ratio to a floor's, paired round by round
 * (issue 28's "explained by a measured part that is not ours"). Between two waves of one server run only the other
 * servers' waves, with no rest: the CPU step's own waves follow a 300 ms settle and five other servers' turns, and
 * its K = 64 walls ran 1.26× and 1.46× step 2's for the same app in the runs of 408e0fb and 4453972. Each load
 * starts with a round not measured, as step 2's and step 3's do: a load's first waves after the last load's ran up
 * to twice as long. Every pool size of step 2 has its own floors: the app's pool set by the lab, next-bare and
 * bare started with the same (a K = 64 wave on 2 connections queues its statements, on every server alike).
 *
 * At K users (not the storm, whose clicks at once would corrupt without a lock) the app under `none` and
 * next-bare's switch without its lease take turns too: the lease's cost over no lock, on the app and at its
 * least, in the same rounds. The lab's strategy is set before the app's turn where it changed, and the settings'
 * own work (a reconciler round, their announcement) given `settleMs` before the wave. Under the storm each
 * server's CPU a click is read too (`cpuSpans`), their resting rates measured before the round not measured.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema";
import type { AppClient } from "../test/harness/http-client";
import { restingRates, serverSwitchers, settleMs, type CpuServer, type CpuServerName } from "./app-cpu";
import { unlockedHeader } from "./bare-switch";
import { freshLab, type Strategy } from "./http-load";
import { processTreeCpu } from "./process-cpu";
import { repeated, shuffled, type Repeated } from "./stats";

/** K users switching at once, one click each; or one user clicking `clicksEach` times at once (one wins). */
export interface FloorLoad {
  users: number;
  clicksEach: number;
  /** The pool of every server: the app's (the lab's setting), next-bare's and bare's: the P whose verdicts it explains. */
  poolSize: number;
}

/** The app, and the floors it is paired with. */
export const floorServerNames = ["lab on", "next-bare", "bare"] as const satisfies readonly CpuServerName[];

/** The app under `none` and next-bare's switch without its lease, beside the lease at K users. */
export const unlockedFloorNames = { "lab on": "lab on, none", "next-bare": "next-bare, none" } as const;

/** A server on the floors: the app runs its waves under the lab's strategy it names. */
interface FloorServer extends CpuServer {
  labStrategy?: Strategy;
}

/** The servers under the lease, and the app and next-bare again without a lock. */
function floorVariants(servers: CpuServer[]): { leased: FloorServer[]; unlocked: FloorServer[] } {
  const leased = servers.map((server) => (server.isTheApp ? { ...server, labStrategy: "lease" as const } : server));
  const app = servers.find((server) => server.isTheApp);
  const nextBare = servers.find((server) => server.name === "next-bare");
  const unlocked: FloorServer[] = [
    ...(app ? [{ ...app, name: unlockedFloorNames["lab on"], labStrategy: "none" as const }] : []),
    ...(nextBare
      ? [
          {
            ...nextBare,
            name: unlockedFloorNames["next-bare"],
            headers: { ...nextBare.headers, [unlockedHeader]: "none" },
          },
        ]
      : []),
  ];
  return { leased, unlocked };
}

/**
 * Before a server's wave: the lab's strategy set to the server's own, where it has one and it changed, then
 * `settleMs` for what a change sets off (a reconciler round under `lease`, the settings' announcement), so that
 * it falls in no wave.
 */
function strategyTurns(lab: AppClient, current: Strategy) {
  return async (server: FloorServer) => {
    if (!server.labStrategy || server.labStrategy === current) return;
    await lab.configure({ strategy: server.labStrategy });
    current = server.labStrategy;
    await sleep(settleMs);
  };
}

/** One user's clicks at once, of which one wins: without a lock they would corrupt. */
const isStorm = (load: FloorLoad) => load.clicksEach > 1;

export const floorLoadName = ({ users, clicksEach, poolSize }: FloorLoad) =>
  `${clicksEach > 1 ? `${clicksEach} clicks at once` : `K=${users}`} P=${poolSize}`;

export interface FloorWaveResult extends FloorLoad {
  name: string;
  /** Per round: until all the load's clicks had answered. */
  wallMs: Repeated;
  statuses: Record<string, number>;
  /** After the load's rounds on every server: the app's rows and the provider's accounts agree. */
  consistent: boolean;
  /** Per round, under the storm: the server's CPU net of its rest, per click (`cpuSpans`). */
  cpuMsPerClick?: Repeated;
}

export async function floorWaves(
  serversAt: (poolSize: number) => Promise<CpuServer[]>,
  db: Kysely<Database>,
  lab: AppClient,
  options: { loads: FloorLoad[]; rounds: number; restMs: number; latencyMs: number; random: () => number },
  progress: (note: string) => void,
): Promise<FloorWaveResult[]> {
  const results: FloorWaveResult[] = [];
  for (const poolSize of new Set(options.loads.map((load) => load.poolSize))) {
    const servers = await serversAt(poolSize);
    const loads = options.loads.filter((load) => load.poolSize === poolSize);
    const users = await freshLab(lab, db, Math.max(...loads.map((load) => load.users)), {
      strategy: "lease",
      poolSize,
      latencyMs: options.latencyMs,
    });
    const { leased, unlocked } = floorVariants(servers);
    const { switchOnce } = await serverSwitchers([...leased, ...unlocked], users);
    const turnTo = strategyTurns(lab, "lease");
    for (const load of loads) {
      const taking = isStorm(load) ? leased : [...leased, ...unlocked];
      results.push(...(await loadOnFloors(taking, { switchOnce, turnTo }, lab, load, options, progress)));
    }
  }
  return results;
}

/** One load's rounds on `servers`, taking turns wave by wave after a round not measured. */
async function loadOnFloors(
  servers: FloorServer[],
  {
    switchOnce,
    turnTo,
  }: {
    switchOnce: Awaited<ReturnType<typeof serverSwitchers>>["switchOnce"];
    turnTo: (server: FloorServer) => Promise<void>;
  },
  lab: AppClient,
  load: FloorLoad,
  options: { rounds: number; restMs: number; random: () => number },
  progress: (note: string) => void,
): Promise<FloorWaveResult[]> {
  // Each click picks its user's other identity as it is sent: a user's clicks at once all ask for the same one.
  // (`switchOnce` counts statuses by `switchLoad`'s K alone; the load's own are counted below.)
  const switchLoad = { users: load.users, switchesEach: 1, readsPageFirst: false, waves: options.rounds };
  const wave = (server: FloorServer) =>
    Promise.all(
      Array.from({ length: load.users }, (_, index) =>
        Promise.all(Array.from({ length: load.clicksEach }, () => switchOnce(server, switchLoad, index))),
      ),
    );
  // Rested before the round not measured, so that the rest is not the first measured round's cold start.
  const rates = isStorm(load) ? await restingRates(servers, options, progress, "on the floors") : undefined;
  for (const server of shuffled(servers, options.random)) {
    progress(`on the floors: ${server.name}, ${floorLoadName(load)}, a round not measured`);
    await turnTo(server);
    await wave(server);
  }
  const spans = rates && cpuSpans(servers, rates);
  const walls = new Map<FloorServer, number[]>(servers.map((server) => [server, []]));
  const statuses = new Map<FloorServer, Record<string, number>>(servers.map((server) => [server, {}]));
  for (let round = 0; round < options.rounds; round++)
    for (const server of shuffled(servers, options.random)) {
      progress(`on the floors: ${server.name}, ${floorLoadName(load)}, round ${round + 1}/${options.rounds}`);
      await turnTo(server);
      spans?.mark(server);
      const started = performance.now();
      const answered = (await wave(server)).flat();
      walls.get(server)!.push(performance.now() - started);
      const counts = statuses.get(server)!;
      for (const status of answered) counts[status] = (counts[status] ?? 0) + 1;
    }
  await spans?.close();
  const { consistent } = await lab.audit();
  return servers.map((server) => ({
    name: server.name,
    ...load,
    wallMs: repeated(walls.get(server)!),
    statuses: statuses.get(server)!,
    consistent,
    ...(spans && { cpuMsPerClick: spans.perClick(server, load.users * load.clicksEach) }),
  }));
}

/**
 * Each server's CPU over its rounds, from the start of one of its waves to the start of its next: between them
 * only the other servers' waves run, so its work after its answers (the app's lane writes, the collector's work
 * on its garbage) stays its own. Net of its resting rate (`rates`) over each span; the last span ends `settleMs`
 * after the last round.
 */
function cpuSpans(servers: FloorServer[], rates: Awaited<ReturnType<typeof restingRates<FloorServer>>>) {
  const marks = new Map(servers.map((server) => [server, [] as { cpuMs: number; at: number }[]]));
  const mark = (server: FloorServer) =>
    marks.get(server)!.push({ cpuMs: processTreeCpu(server.pid)!.allMs, at: performance.now() });
  return {
    mark,
    async close() {
      await sleep(settleMs);
      for (const server of servers) mark(server);
    },
    perClick(server: FloorServer, clicks: number): Repeated {
      const [resting, spanMarks] = [rates.get(server)!.all.median, marks.get(server)!];
      return repeated(
        spanMarks.slice(1).map((end, index) => {
          const start = spanMarks[index]!;
          return (end.cpuMs - start.cpuMs - (resting * (end.at - start.at)) / 1000) / clicks;
        }),
      );
    },
  };
}
