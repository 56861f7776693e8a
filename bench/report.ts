/** The run's verdicts against the targets, the terminal table, the charts, and the per-switch inventory. */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { lineChart, type Series } from "./charts";
import type { BystanderResult, SingleSwitchResult, Strategy, TwoInstancesResult, WaveResult } from "./http-load";
import type { AppCpuResult } from "./app-cpu";
import type { ContentionResult, MicroResult } from "./lease-micro";
import { repeated, type Repeated } from "./stats";

export interface Results {
  date: string;
  micro: MicroResult;
  contention: ContentionResult[];
  single: SingleSwitchResult[];
  scaling: WaveResult[];
  bystander: BystanderResult[];
  twoInstances: TwoInstancesResult;
  appCpu: AppCpuResult[];
}

/** How many pool turns a wave of K switches takes with a pool of P: only the connection-holding guards queue. */
export const predictedWaveTurns = (strategy: Strategy, users: number, poolSize: number): number =>
  strategy === "transaction" || strategy === "advisory" ? Math.ceil(users / poolSize) : 1;

export function versionsOf(packages: string[]): Record<string, string> {
  return Object.fromEntries(
    packages.map((name) => {
      const manifest = path.join(import.meta.dirname, "..", "node_modules", name, "package.json");
      return [name, (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version];
    }),
  );
}

/**
 * Database round trips and durable commits (transactions that write, so wait for the WAL flush) of one
 * switch that changes the primary, counted from the code path (no idempotency key, nothing to recover),
 * the app's own only: the simulated provider's statements are its own database work, inside L. Not
 * counted either: the lab's timeline, which writes each request's lane through a pool of its own while
 * the switch runs (the answer waits for its last write only), and the lab's settings, which each instance
 * holds in memory from their announcements (lib/lab/settings-snapshot.ts).
 */
export const roundTripInventory: Record<Strategy, { roundTrips: number; durableCommits: number; why: string[] }> = {
  lease: {
    roundTrips: 8,
    durableCommits: 5,
    why: [
      "look up the session (1, read)",
      "check the identity is the user's (1, read)",
      "acquire: the lease, the journaled intent (step acquired, from the current primary) and the user row, " +
        "in one statement (1, commit): the switch needs no read of its own, and no write to say it started",
      "read leftover journal entries to recover (1, read): a previous holder may have left a switch half-done",
      "journal step unlinked, then linked (2, commits): recovery needs to know how far a crash got; each write " +
        "is owner-checked and answers whether the lease is unexpired, so it is also the check before the next step",
      "save the new primary and journal step done, in one statement (1, commit)",
      "release (1, commit): the next switch need not wait for the TTL",
    ],
  },
  transaction: {
    roundTrips: 7,
    durableCommits: 1,
    why: [
      "look up the session (1, read)",
      "check the identity is the user's (1, read)",
      "BEGIN; SELECT … FOR UPDATE; read the user; save; COMMIT (5, one commit): the connection is held across both provider calls",
    ],
  },
  advisory: {
    roundTrips: 7,
    durableCommits: 1,
    why: [
      "look up the session (1, read)",
      "check the identity is the user's (1, read)",
      "BEGIN; pg_advisory_xact_lock; read the user; save; COMMIT (5, one commit): the connection is held across both provider calls",
    ],
  },
  optimistic: {
    roundTrips: 5,
    durableCommits: 1,
    why: [
      "look up the session (1, read)",
      "check the identity is the user's (1, read)",
      "read the version (1, read)",
      "read the user (1, read)",
      "save if the version is unchanged (1, commit)",
    ],
  },
  none: {
    roundTrips: 4,
    durableCommits: 1,
    why: [
      "look up the session (1, read)",
      "check the identity is the user's (1, read)",
      "read the user (1, read)",
      "save (1, commit)",
    ],
  },
};

/** The idle bystander's read p99 over its runs: the reference for the loaded ones. */
export const idleReadP99 = (runs: BystanderResult[]): Repeated =>
  repeated(runs.filter((run) => run.strategy === "idle").map((run) => run.reads.p99 ?? run.reads.max));

export interface Target {
  target: string;
  measured: string;
  holds: boolean;
}

const ratioText = (value: number, min: number, max: number) =>
  `${value.toFixed(2)}× [${min.toFixed(2)}–${max.toFixed(2)}]`;

export function checkTargets(results: Results, scalingLatencyMs: number): Target[] {
  const targets: Target[] = [];
  const { ratios } = results.micro;
  const add = (target: string, measured: string, holds: boolean) => targets.push({ target, measured, holds });
  for (const [name, ratio, limit] of [
    ["library ≤ 1.15× raw SQL, p50", ratios.libraryToRawP50, 1.15],
    ["library ≤ 1.15× raw SQL, p99", ratios.libraryToRawP99, 1.15],
    ["library ≤ 1.3× two bare UPDATEs, p50", ratios.libraryToBareP50, 1.3],
    ["library ≤ 1.3× two bare UPDATEs, p99", ratios.libraryToBareP99, 1.3],
  ] as const) {
    if (Number.isFinite(ratio.median)) add(name, ratioText(ratio.median, ratio.min, ratio.max), ratio.median <= limit);
  }
  for (const run of results.contention) {
    add(
      `contention N=${run.acquirers}: one winner every round`,
      `${run.roundsWithoutOneWinner} rounds without`,
      run.roundsWithoutOneWinner === 0,
    );
    if (Number.isFinite(run.libraryToRawP99.median))
      add(
        `contention N=${run.acquirers}: p99 ≤ 1.2× raw statement`,
        ratioText(run.libraryToRawP99.median, run.libraryToRawP99.min, run.libraryToRawP99.max),
        run.libraryToRawP99.median <= 1.2,
      );
  }
  const lone = (strategy: Strategy) => results.single.find((each) => each.strategy === strategy);
  const [loneLease, loneNone] = [lone("lease"), lone("none")];
  if (loneLease) {
    add(
      `one switch, lease: p50 ≤ 2L + 8 ms (L = ${loneLease.latencyMs} ms)`,
      `${loneLease.p50.median.toFixed(1)} ms (${loneLease.outsideProviderP50.median.toFixed(1)} ms outside the provider)`,
      loneLease.p50.median <= 2 * loneLease.latencyMs + 8,
    );
    if (loneNone)
      add(
        "one switch: the lease adds ≤ 3 ms over none, p50",
        `${(loneLease.p50.median - loneNone.p50.median).toFixed(1)} ms (none ${loneNone.p50.median.toFixed(1)} ms)`,
        loneLease.p50.median - loneNone.p50.median <= 3,
      );
  }
  for (const wave of results.scaling.filter((each) => each.strategy === "lease")) {
    const limit = wave.users <= 16 ? 1.1 : 1.25;
    add(
      `scaling, lease K=${wave.users} P=${wave.poolSize}: wall ≤ ${limit} × 2L`,
      `${(wave.wallMs.median / (2 * scalingLatencyMs)).toFixed(2)} × 2L`,
      wave.wallMs.median <= limit * 2 * scalingLatencyMs,
    );
    const none = results.scaling.find(
      (each) => each.strategy === "none" && each.users === wave.users && each.poolSize === wave.poolSize,
    );
    if (none)
      add(
        `scaling, lease K=${wave.users} P=${wave.poolSize}: wall ≤ 1.05× none's`,
        `${(wave.wallMs.median / none.wallMs.median).toFixed(2)}× none's (${Math.round(none.wallMs.median)} ms)`,
        wave.wallMs.median <= 1.05 * none.wallMs.median,
      );
  }
  for (const wave of results.scaling.filter((each) => each.strategy !== "lease" && each.strategy !== "none")) {
    const ratio = wave.wallMs.median / wave.predictedMs;
    add(
      `scaling, ${wave.strategy} K=${wave.users} P=${wave.poolSize}: about ⌈K/P⌉ × 2L`,
      `${ratio.toFixed(2)} × prediction`,
      ratio >= 0.8 && ratio <= 1.3,
    );
  }
  const idle = idleReadP99(results.bystander);
  const idleP99 = idle.median;
  for (const run of results.bystander.filter((each) => each.strategy === "lease")) {
    const p99 = run.reads.p99 ?? run.reads.max;
    add(
      `bystander, lease K=${run.users}: read p99 ≤ 1.5× idle`,
      `${(p99 / idleP99).toFixed(2)}× idle (idle p99 ${ms(idleP99)} ms [${ms(idle.min)}–${ms(idle.max)}])`,
      p99 <= 1.5 * idleP99,
    );
  }
  const transaction = results.bystander.filter((each) => each.strategy === "transaction");
  if (transaction.length > 1) {
    const p99s = transaction.map((run) => run.reads.p99 ?? run.reads.max);
    add(
      "bystander, transaction: read p99 grows with K",
      p99s.map((value, index) => `K=${transaction[index]!.users}: ${(value / idleP99).toFixed(1)}×`).join(", "),
      p99s.at(-1)! > 2 * p99s[0]!,
    );
  }
  const pair = results.twoInstances;
  add(
    `two instances, lease, K=${pair.users} double clicks: consistent, one 200 per user per wave`,
    `${JSON.stringify(pair.statuses)}, ${pair.consistent ? "consistent" : "VIOLATION"}`,
    pair.consistent && (pair.statuses["200"] ?? 0) === (pair.statuses["409"] ?? -1),
  );
  add(
    `two instances, lease: wall ≤ 1.2 × 2L`,
    `${(pair.wallMs.median / (2 * scalingLatencyMs)).toFixed(2)} × 2L`,
    pair.wallMs.median <= 1.2 * 2 * scalingLatencyMs,
  );
  const cpuOf = (name: AppCpuResult["name"]) => results.appCpu.find((each) => each.name === name);
  const floor = cpuOf("floor");
  for (const [name, limit] of [
    ["lab on", 2.5],
    ["lab off", 1.5],
  ] as const) {
    const server = cpuOf(name);
    if (!server) continue;
    const perSwitch = server.cpuMsPerSwitch;
    add(
      `app CPU per switch, ${name}, K=${server.users}: ≤ ${limit} ms`,
      `${perSwitch.median.toFixed(2)} ms [${perSwitch.min.toFixed(2)}–${perSwitch.max.toFixed(2)}]`,
      perSwitch.median <= limit,
    );
    if (floor)
      add(
        `app CPU per switch, ${name}, K=${server.users}: ≤ 2× the floor`,
        `${(perSwitch.median / floor.cpuMsPerSwitch.median).toFixed(2)}× (floor ${floor.cpuMsPerSwitch.median.toFixed(2)} ms)`,
        perSwitch.median <= 2 * floor.cpuMsPerSwitch.median,
      );
    add(
      `app at rest, ${name}: ≤ 1 % of a core`,
      `${server.restingPercentOfCore.toFixed(2)} %`,
      server.restingPercentOfCore <= 1,
    );
  }
  return targets;
}

const ms = (value: number | null) => (value === null || !Number.isFinite(value) ? "n/a" : value.toFixed(2));

export function report(results: Results, targets: Target[]): void {
  console.log("\nLease library, one acquire + release (ms, median [min–max] of repetitions):");
  console.table(
    Object.fromEntries(
      Object.entries(results.micro.variants).map(([variant, figures]) => [
        variant,
        {
          p50: `${ms(figures.p50.median)} [${ms(figures.p50.min)}–${ms(figures.p50.max)}]`,
          p99: ms(figures.p99.median),
        },
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
      answers: Object.entries(wave.statuses)
        .map(([status, count]) => `${count}×${status}`)
        .join(" "),
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
  console.log(`CPU per switch, K users at once, net of the server's rate at rest (ms, median [min–max] of waves):`);
  console.table(
    results.appCpu.map((server) => ({
      server: server.name,
      K: server.users,
      "CPU per switch (ms)": `${ms(server.cpuMsPerSwitch.median)} [${ms(server.cpuMsPerSwitch.min)}–${ms(server.cpuMsPerSwitch.max)}]`,
      "wall (ms)": Math.round(server.wallMs.median),
      "at rest (% of a core)": ms(server.restingPercentOfCore),
      answers: Object.entries(server.statuses)
        .map(([status, count]) => `${count}×${status}`)
        .join(" "),
    })),
  );
  console.log("Targets:");
  console.table(targets.map((each) => ({ ...each, holds: each.holds ? "yes" : "NO" })));
}

const colors: Record<string, string[]> = {
  lease: ["#1b7f3b", "#2ca25f", "#66c2a4"],
  transaction: ["#b2182b", "#d6604d", "#f4a582"],
  advisory: ["#5e3c99", "#8073ac", "#b2abd2"],
  optimistic: ["#e08214"],
  none: ["#555555"],
  "bare-updates": ["#555555"],
  "raw-sql": ["#d6604d"],
  "raw-sql-prepared": ["#2166ac"],
  library: ["#1b7f3b"],
};

export function writeCharts(results: Results, directory: string, scalingLatencyMs: number): void {
  const scaling: Series[] = [];
  // `none` is measured as the lease's reference, not drawn: the lesson is the lease against the queues.
  const drawn = results.scaling.filter((wave) => wave.strategy !== "none");
  const groups = [...new Set(drawn.map((wave) => `${wave.strategy}|${wave.poolSize}`))];
  for (const group of groups) {
    const [strategy, poolSize] = group.split("|") as [Strategy, string];
    const waves = results.scaling.filter((wave) => wave.strategy === strategy && String(wave.poolSize) === poolSize);
    const shade =
      colors[strategy]![[...new Set(results.scaling.map((wave) => wave.poolSize))].indexOf(Number(poolSize))] ?? "#999";
    scaling.push({
      label: `${strategy}, P=${poolSize}`,
      color: shade,
      points: waves.map((wave) => [wave.users, wave.wallMs.median]),
    });
    if (strategy !== "lease")
      scaling.push({
        label: `  predicted ⌈K/P⌉·2L`,
        color: shade,
        dashed: true,
        points: waves.map((wave) => [wave.users, wave.predictedMs]),
      });
  }
  const userCounts = [...new Set(results.scaling.map((wave) => wave.users))];
  scaling.push({
    label: "lease predicted: 2L",
    color: "#1b7f3b",
    dashed: true,
    points: userCounts.map((users) => [users, 2 * scalingLatencyMs]),
  });
  writeFileSync(
    path.join(directory, "scaling.svg"),
    lineChart({
      title: `K users switching at once: time until all answered (L = ${scalingLatencyMs} ms)`,
      xLabel: "K users switching at once",
      yLabel: "wall time (ms, log)",
      series: scaling,
      xLog: true,
      yLog: true,
      xTicks: userCounts,
    }),
  );

  const single = results.single.map((run) => ({
    label: `${run.strategy}: p50 ${run.p50.median.toFixed(0)} ms`,
    color: colors[run.strategy]![0]!,
    points: run.shape.map((value, index) => [value, index * 2] as [number, number]),
  }));
  const latency = results.single[0]!.latencyMs;
  single.push({
    label: "floor 2L",
    color: "#000",
    dashed: true,
    points: [
      [2 * latency, 0],
      [2 * latency, 100],
    ],
  } as never);
  writeFileSync(
    path.join(directory, "switch-latency.svg"),
    lineChart({
      title: `One switch alone over HTTP, per strategy (L = ${latency} ms): distribution`,
      xLabel: "answer time (ms)",
      yLabel: "percentile",
      series: single,
      yTicks: [0, 25, 50, 75, 90, 100],
    }),
  );

  const micro = Object.entries(results.micro.variants).map(([variant, figures]) => ({
    label: `${variant}: p50 ${figures.p50.median.toFixed(2)} ms`,
    color: colors[variant]![0]!,
    points: figures.shape.map((value, index) => [value, index * 2] as [number, number]),
  }));
  writeFileSync(
    path.join(directory, "lease-micro.svg"),
    lineChart({
      title: "One acquire + release straight on PostgreSQL: distribution",
      xLabel: "time (ms, log)",
      yLabel: "percentile",
      series: micro,
      xLog: true,
      yTicks: [0, 25, 50, 75, 90, 98, 100],
    }),
  );

  const idleP99 = idleReadP99(results.bystander).median;
  const bystanderCounts = [...new Set(results.bystander.filter((run) => run.users > 0).map((run) => run.users))];
  const bystander: Series[] = (["lease", "transaction"] as const).map((strategy) => ({
    label: `${strategy}: read p99`,
    color: colors[strategy]![0]!,
    points: results.bystander
      .filter((run) => run.strategy === strategy)
      .map((run) => [run.users, run.reads.p99 ?? run.reads.max] as [number, number]),
  }));
  bystander.push({
    label: "1.5 × idle p99",
    color: "#1b7f3b",
    dashed: true,
    points: bystanderCounts.map((users) => [users, 1.5 * idleP99]),
  });
  writeFileSync(
    path.join(directory, "bystander.svg"),
    lineChart({
      title: `A bystander's reads while K users switch (P = ${results.bystander[0]!.poolSize})`,
      xLabel: "K users switching",
      yLabel: "read p99 (ms, log)",
      series: bystander,
      xLog: true,
      yLog: true,
      xTicks: bystanderCounts,
    }),
  );
}
