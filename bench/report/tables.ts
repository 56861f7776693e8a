/** The run's tables on the terminal: one per step, then the targets. */
import { roundTripInventory } from "./round-trips";
import { floorLoadName } from "../floor-waves";
import {
  answersText,
  bystanderFloorsAt,
  cpuOf,
  floorBystanderLoadsOf,
  floorLoadsOf,
  floorsAt,
  leaseOverNoneAt,
  ms,
  spread,
  type Results,
} from "./results";
import type { Target } from "./targets";

function libraryTables(results: Results): void {
  console.log("\nLease library, one acquire + release (ms, median [min–max] of repetitions):");
  console.table(
    Object.fromEntries(
      Object.entries(results.micro.variants).map(([variant, figures]) => [
        variant,
        { p50: spread(figures.p50), p99: ms(figures.p99.median) },
      ]),
    ),
  );
  console.log("Contention on one row (answer time, ms):");
  console.table(
    results.contention.map((run) => ({
      N: run.acquirers,
      rounds: run.rounds,
      "library p50": ms(run.library.p50.median),
      "library p99": ms(run.library.p99.median),
      "raw p50": ms(run.raw.p50.median),
      "raw p99": ms(run.raw.p99.median),
      "rounds without one winner": run.roundsWithoutOneWinner,
    })),
  );
}

function httpTables(results: Results): void {
  console.log("One switch alone over HTTP:");
  console.table(
    results.single.map((run) => ({
      strategy: run.strategy,
      "L (ms)": run.latencyMs,
      "p50 (ms)": ms(run.p50.median),
      "outside provider p50 (ms)": ms(run.outsideProviderP50.median),
      "app CPU per switch (ms)": ms(run.appCpuMsPerSwitch),
      "round trips": roundTripInventory[run.strategy].roundTrips,
      "durable commits": roundTripInventory[run.strategy].durableCommits,
    })),
  );
  console.log("K users switching at once (wall ms, median of waves):");
  console.table(
    results.scaling.map((wave) => ({
      strategy: wave.strategy,
      P: wave.poolSize,
      K: wave.users,
      "wall (ms)": Math.round(wave.wallMs.median),
      "predicted (ms)": wave.predictedMs,
      "app CPU per switch (ms)": ms(wave.appCpuMsPerSwitch),
      waves: wave.wallMs.runs.length,
      answers: answersText(wave.statuses),
      consistent: wave.consistent,
    })),
  );
  console.log("The same K = 64 on two instances behind HAProxy (wall ms, median of waves):");
  console.table(
    results.balanced.map((wave) => ({
      strategy: wave.strategy,
      P: wave.poolSize,
      K: wave.users,
      "wall (ms)": Math.round(wave.wallMs.median),
      "app CPU per switch, both (ms)": ms(wave.appCpuMsPerSwitch),
      answers: answersText(wave.statuses),
      consistent: wave.consistent,
    })),
  );
  console.log("Bystander reads (ms):");
  console.table(
    results.bystander.map((run) => ({
      strategy: run.strategy,
      K: run.users,
      P: run.poolSize,
      reads: run.reads.count,
      p50: ms(run.reads.p50),
      p99: ms(run.reads.p99),
      max: ms(run.reads.max),
    })),
  );
}

function clicksTable(results: Results): void {
  console.log("Clicks (wall ms until all answered; the app's CPU per click, every instance's):");
  console.table(
    results.clicks.map((run) => ({
      clicks: run.kind,
      instances: run.instances,
      "wall (ms)": spread(run.wallMs, 0),
      "CPU per click (ms)": run.cpuMsPerClick ? spread(run.cpuMsPerClick) : "n/a",
      answers: answersText(run.statuses),
      consistent: run.consistent,
    })),
  );
}

export function cpuTables(results: Pick<Results, "appCpu" | "loneSwitches">): void {
  console.log(`CPU per switch, net of the server's rate at rest (ms, median [min–max] of waves):`);
  console.table(
    results.appCpu.map((server) => ({
      server: server.name,
      load: server.load,
      "CPU per switch (ms)": spread(server.cpuMsPerSwitch),
      "main thread (ms)": ms(server.mainThreadMsPerSwitch?.median ?? null),
      "wall (ms)": Math.round(server.wallMs.median),
      "at rest (% of a core)": spread(server.restingPercentOfCore),
      answers: answersText(server.statuses),
    })),
  );
  const many = (name: Parameters<typeof cpuOf>[1]) => cpuOf(results, name, "many")?.cpuMsPerSwitch.median ?? NaN;
  console.log("Whose the app's CPU is, at K at once (ms per switch, medians):");
  console.table({
    "Next.js's own and one statement (next-min)": ms(many("next-min")),
    "ours, lab off (lab off − next-min)": ms(many("lab off") - many("next-min")),
    "of which the least switch's, in Next.js (next-bare − next-min)": ms(many("next-bare") - many("next-min")),
    "of which the rest (lab off − next-bare)": ms(many("lab off") - many("next-bare")),
    "the lab's (lab on − lab off)": ms(many("lab on") - many("lab off")),
    "the machine's floor (bare)": ms(many("bare")),
    "our switch over the floor (outside Next.js − bare)": ms(many("outside Next.js") - many("bare")),
  });
  console.log("A lone switch on each, lease (ms, median [min–max] of repetitions' p50s):");
  console.table(
    results.loneSwitches.map((server) => ({
      server: server.name,
      L: server.latencyMs,
      p50: spread(server.p50),
      "outside the provider": spread(server.outsideProviderP50),
    })),
  );
}

/** Waves on the app and the floors, taking turns (floor-waves.ts). */
function floorWavesTable(results: Results): void {
  const loads = floorLoadsOf(results);
  if (loads.length === 0) return;
  console.log("The app and the floors, taking turns (wall ms, median [min–max] of rounds):");
  console.table(
    loads.map((load) => {
      const { app, part, bare, paired } = floorsAt(results, load);
      const overNone = leaseOverNoneAt(results, load);
      return {
        load: floorLoadName(load),
        "app (lab on, lease)": app ? spread(app.wallMs, 0) : "—",
        "next-bare": part ? spread(part.wallMs, 0) : "—",
        bare: bare ? spread(bare.wallMs, 0) : "—",
        "app ÷ next-bare, paired": paired ? spread(paired) : "—",
        "lease ÷ none, app": overNone.app ? spread(overNone.app.ratio) : "—",
        "lease ÷ none, next-bare": overNone.part ? spread(overNone.part.ratio) : "—",
      };
    }),
  );
}

/** A bystander's reads on the app and next-bare, taking turns (floor-bystander.ts). */
function floorBystanderTable(results: Results): void {
  const loads = floorBystanderLoadsOf(results);
  if (loads.length === 0) return;
  const text = (side: { p99: number; overIdle: number } | undefined) =>
    side ? `${ms(side.p99)} (${side.overIdle.toFixed(2)}×)` : "—";
  console.log("A bystander on the app and on next-bare, taking turns (read p99 ms, × its own idle p99):");
  console.table(
    loads.map((load) => {
      const floors = bystanderFloorsAt(results, load.users, load.poolSize);
      return {
        load: floorLoadName(load),
        "app (lab on, lease)": text(floors?.app),
        "next-bare": text(floors?.part),
      };
    }),
  );
}

export function printTables(results: Results, targets: Target[]): void {
  libraryTables(results);
  httpTables(results);
  clicksTable(results);
  cpuTables(results);
  floorWavesTable(results);
  floorBystanderTable(results);
  printVerdicts(targets);
}

/** Every verdict, how many hold, and the ones that do not. */
export function printVerdicts(targets: Target[]): void {
  console.log("Targets:");
  console.table(
    targets.map(({ explainedBy, ...each }) => ({
      ...each,
      holds: each.holds ? "yes" : explainedBy ? "no (explained)" : "NO",
    })),
  );
  const failing = targets.filter((each) => !each.holds);
  const explained = failing.filter((each) => each.explainedBy);
  console.log(
    `${targets.length - failing.length} of ${targets.length} targets hold` +
      (explained.length > 0 ? `; ${explained.length} of the misses are explained by a part not ours.` : "."),
  );
  const line = (each: Target) =>
    `  ${each.target}: ${each.measured}${each.explainedBy ? `\n    explained: ${each.explainedBy}` : ""}`;
  if (failing.length > 0) console.log(`Not holding:\n${failing.map(line).join("\n")}`);
}
