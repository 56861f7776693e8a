/** What one run of `npm run bench` measured, as the targets, the tables and the charts read it. */
import type { AppCpuResult, CpuServerName, LoneSwitchResult } from "../app-cpu";
import type { ClickKind, ClicksResult } from "../clicks";
import type { BystanderResult, SingleSwitchResult, TwoInstancesResult, WaveResult } from "../http-load";
import { bystanderFloorNames, type FloorBystanderResult } from "../floor-bystander";
import {
  floorLoadName,
  floorServerNames,
  unlockedFloorNames,
  type FloorLoad,
  type FloorWaveResult,
} from "../floor-waves";
import type { ContentionResult, MicroResult } from "../lease-micro";
import type { ProviderAloneResult } from "../provider-alone";
import { repeated, type Distribution, type Repeated } from "../stats";

export interface Results {
  date: string;
  micro: MicroResult;
  contention: ContentionResult[];
  single: SingleSwitchResult[];
  /** The provider alone: K clients making a switch's two calls at once, at the lone switch's L and the waves'. */
  providerAlone: ProviderAloneResult[];
  scaling: WaveResult[];
  bystander: BystanderResult[];
  twoInstances: TwoInstancesResult;
  clicks: ClicksResult[];
  /** K users at once on two instances behind HAProxy. */
  balanced: WaveResult[];
  appCpu: AppCpuResult[];
  /** Whether the app's rows and the provider's accounts agreed after the CPU step's switches. */
  appCpuConsistent: boolean;
  /** The CPU step's servers' lone switches, at the lone-switch step's L. */
  loneSwitches: LoneSwitchResult[];
  /** The app and the floors taking turns, K at once and one user's clicks at once (absent from runs before them). */
  floorWaves?: FloorWaveResult[];
  /** A bystander's reads on the app and next-bare (floor-bystander.ts); absent from runs before it. */
  floorBystander?: FloorBystanderResult[];
}

/** A server's CPU per switch under a load: K users at once (`many`), one user (`one`), or a page read first. */
export function cpuOf(
  results: Pick<Results, "appCpu">,
  name: CpuServerName,
  load: "many" | "one" | "page",
): AppCpuResult | undefined {
  const loads = results.appCpu.filter((each) => each.name === name && each.readsPageFirst === (load === "page"));
  const most = Math.max(...loads.map((each) => each.users));
  return loads.find((each) => (load === "many" ? each.users === most && most > 1 : each.users === 1));
}

/** Each load once, in the order they ran (a load's results are one per server, and per round of idle). */
const distinctLoads = (loads: FloorLoad[]): FloorLoad[] => [
  ...new Map(
    loads.map(({ users, clicksEach, poolSize }) => [
      floorLoadName({ users, clicksEach, poolSize }),
      { users, clicksEach, poolSize },
    ]),
  ).values(),
];

/** The floor waves' loads, in the order they ran. */
export const floorLoadsOf = ({ floorWaves = [] }: Pick<Results, "floorWaves">) => distinctLoads(floorWaves);

/**
 * A load's waves in the floor waves (floor-waves.ts): the app's, next-bare's (the part) and bare's, and the app's
 * wave times as a ratio to next-bare's, round by round: they took turns, so a round shares its moment.
 */
export function floorsAt({ floorWaves = [] }: Pick<Results, "floorWaves">, load: FloorLoad) {
  const [app, part, bare] = floorServerNames.map((name) => floorWaveOf(floorWaves, name, load));
  return { app, part, bare, paired: pairedRatio(app, part) };
}

/**
 * The lease over no lock at a load of the floors, round by round: the app's (under `lease` over under `none`) and
 * next-bare's (its switch over the same without its lease), as a ratio and as ms past `limit` × no lock's wall.
 * Null where the run has no unlocked waves.
 */
export function leaseOverNoneAt({ floorWaves = [] }: Pick<Results, "floorWaves">, load: FloorLoad) {
  const sideOf = (name: keyof typeof unlockedFloorNames) => {
    const [lease, none] = [name, unlockedFloorNames[name]].map((each) => floorWaveOf(floorWaves, each, load));
    if (!lease || !none) return null;
    const perRound = (of: (wall: number, noneWall: number) => number) =>
      repeated(lease.wallMs.runs.map((wall, round) => of(wall, none.wallMs.runs[round]!)));
    return {
      ratio: perRound((wall, noneWall) => wall / noneWall),
      pastMs: (limit: number) => perRound((wall, noneWall) => wall - limit * noneWall),
    };
  };
  return { app: sideOf("lab on"), part: sideOf("next-bare") };
}

const floorWaveOf = (floorWaves: FloorWaveResult[], name: string, load: FloorLoad) =>
  floorWaves.find((each) => each.name === name && floorLoadName(each) === floorLoadName(load));

/** One server's waves over another's, round by round: they took turns, so a round shares its moment. */
const pairedRatio = (over?: FloorWaveResult, under?: FloorWaveResult) =>
  over && under ? repeated(over.wallMs.runs.map((wall, round) => wall / under.wallMs.runs[round]!)) : null;

/** Wall time in units of 2L: the figure the wall-time targets judge, and print. */
export const in2L = (wallMs: number, latencyMs: number) => wallMs / (2 * latencyMs);

export const clicksOf = (results: Results, kind: ClickKind, instances: 1 | 2) =>
  results.clicks.find((each) => each.kind === kind && each.instances === instances);

/** A bystander run's read p99 (its slowest read where it made too few reads for a p99). */
export const readP99 = (reads: Distribution) => reads.p99 ?? reads.max;

/** The idle bystander's read p99 over its runs: the reference for the loaded ones. */
export const idleReadP99 = (runs: BystanderResult[]): Repeated =>
  repeated(runs.filter((run) => run.strategy === "idle").map((run) => readP99(run.reads)));

/** The bystander on the floors' loads (K > 0 at P), in the order they ran. */
export const floorBystanderLoadsOf = ({ floorBystander = [] }: Pick<Results, "floorBystander">) =>
  distinctLoads(floorBystander.filter((each) => each.users > 0).map((each) => ({ ...each, clicksEach: 1 })));

/**
 * The bystander on the floors (floor-bystander.ts) under K at P: the app's and next-bare's read p99, each with its
 * own idle p99 (the median of its idle runs), and the p99 as a multiple of it.
 */
export function bystanderFloorsAt(
  { floorBystander = [] }: Pick<Results, "floorBystander">,
  users: number,
  poolSize: number,
) {
  const [app, part] = bystanderFloorNames.map((name) => {
    const runs = floorBystander.filter((each) => each.name === name && each.poolSize === poolSize);
    const loaded = runs.find((each) => each.users === users);
    const idle = repeated(runs.filter((each) => each.users === 0).map((each) => readP99(each.reads)));
    if (!loaded || idle.runs.length === 0) return undefined;
    const p99 = readP99(loaded.reads);
    return { p99, idle, overIdle: p99 / idle.median };
  });
  return app && part ? { app, part } : undefined;
}

/** Milliseconds as the tables print them. */
export const ms = (value: number | null) => (value === null || !Number.isFinite(value) ? "n/a" : value.toFixed(2));

/**
 * A figure a target judges with `holds`, to `digits` decimals or as many more as it takes for the text to get
 * the figure's own verdict: 1.2044 against ≤ 1.2 is "1.204", never "1.20".
 */
export function figureAgainst(value: number, holds: (figure: number) => boolean, digits = 2): string {
  let text = value.toFixed(digits);
  for (let decimals = digits + 1; holds(Number(text)) !== holds(value) && decimals <= 20; decimals++)
    text = value.toFixed(decimals);
  return text;
}

/** The verdict of a figure that must not exceed `limit`. */
export const atMost = (limit: number) => (figure: number) => figure <= limit;

/** A figure over repetitions as `median [min–max]`. */
export const spread = (figure: Repeated, digits = 2, unit = "") =>
  `${figure.median.toFixed(digits)}${unit} [${figure.min.toFixed(digits)}–${figure.max.toFixed(digits)}]`;

/** `spread` of a figure whose median a target judges with `holds` (figureAgainst). */
export const spreadAgainst = (figure: Repeated, holds: (figure: number) => boolean, digits = 2, unit = "") =>
  `${figureAgainst(figure.median, holds, digits)}${unit} [${figure.min.toFixed(digits)}–${figure.max.toFixed(digits)}]`;

/** `count×status` for each status answered. */
export const answersText = (statuses: Record<string, number>) =>
  Object.entries(statuses)
    .map(([status, count]) => `${count}×${status}`)
    .join(" ");
