/** The run's tables on the terminal: one per step, then the targets. */
import { roundTripInventory } from "./round-trips";
import { answersText, ms, spread, type Results } from "./results";
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

function cpuTable(results: Results): void {
  console.log(`CPU per switch, K users at once, net of the server's rate at rest (ms, median [min–max] of waves):`);
  console.table(
    results.appCpu.map((server) => ({
      server: server.name,
      K: server.users,
      "CPU per switch (ms)": spread(server.cpuMsPerSwitch),
      "wall (ms)": Math.round(server.wallMs.median),
      "at rest (% of a core)": ms(server.restingPercentOfCore),
      answers: answersText(server.statuses),
    })),
  );
}

export function printTables(results: Results, targets: Target[]): void {
  libraryTables(results);
  httpTables(results);
  cpuTable(results);
  console.log("Targets:");
  console.table(targets.map((each) => ({ ...each, holds: each.holds ? "yes" : "NO" })));
}
