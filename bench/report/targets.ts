/** The run's verdicts against the issues' targets: each a ratio or a count taken within the run. */
import type { AppCpuResult } from "../app-cpu";
import type { Strategy } from "../http-load";
import type { Repeated } from "../stats";
import { idleReadP99, ms, type Results } from "./results";

export interface Target {
  target: string;
  measured: string;
  holds: boolean;
}

type Add = (target: string, measured: string, holds: boolean) => void;

const ratioText = (ratio: Repeated) => `${ratio.median.toFixed(2)}× [${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)}]`;

function libraryTargets(results: Results, add: Add): void {
  const { ratios } = results.micro;
  for (const [name, ratio, limit] of [
    ["library ≤ 1.15× raw SQL, p50", ratios.libraryToRawP50, 1.15],
    ["library ≤ 1.15× raw SQL, p99", ratios.libraryToRawP99, 1.15],
    ["library ≤ 1.3× two bare UPDATEs, p50", ratios.libraryToBareP50, 1.3],
    ["library ≤ 1.3× two bare UPDATEs, p99", ratios.libraryToBareP99, 1.3],
  ] as const) {
    if (Number.isFinite(ratio.median)) add(name, ratioText(ratio), ratio.median <= limit);
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
        ratioText(run.libraryToRawP99),
        run.libraryToRawP99.median <= 1.2,
      );
  }
}

function loneSwitchTargets(results: Results, add: Add): void {
  const lone = (strategy: Strategy) => results.single.find((each) => each.strategy === strategy);
  const [loneLease, loneNone] = [lone("lease"), lone("none")];
  if (!loneLease) return;
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

function scalingTargets(results: Results, add: Add, latencyMs: number): void {
  for (const wave of results.scaling.filter((each) => each.strategy === "lease")) {
    const limit = wave.users <= 16 ? 1.1 : 1.25;
    add(
      `scaling, lease K=${wave.users} P=${wave.poolSize}: wall ≤ ${limit} × 2L`,
      `${(wave.wallMs.median / (2 * latencyMs)).toFixed(2)} × 2L`,
      wave.wallMs.median <= limit * 2 * latencyMs,
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
}

function bystanderTargets(results: Results, add: Add): void {
  const idle = idleReadP99(results.bystander);
  for (const run of results.bystander.filter((each) => each.strategy === "lease")) {
    const p99 = run.reads.p99 ?? run.reads.max;
    add(
      `bystander, lease K=${run.users}: read p99 ≤ 1.5× idle`,
      `${(p99 / idle.median).toFixed(2)}× idle (idle p99 ${ms(idle.median)} ms [${ms(idle.min)}–${ms(idle.max)}])`,
      p99 <= 1.5 * idle.median,
    );
  }
  const transaction = results.bystander.filter((each) => each.strategy === "transaction");
  if (transaction.length > 1) {
    const p99s = transaction.map((run) => run.reads.p99 ?? run.reads.max);
    add(
      "bystander, transaction: read p99 grows with K",
      p99s.map((value, index) => `K=${transaction[index]!.users}: ${(value / idle.median).toFixed(1)}×`).join(", "),
      p99s.at(-1)! > 2 * p99s[0]!,
    );
  }
}

function twoInstanceTargets(results: Results, add: Add, latencyMs: number): void {
  const pair = results.twoInstances;
  add(
    `two instances, lease, K=${pair.users} double clicks: consistent, one 200 per user per wave`,
    `${JSON.stringify(pair.statuses)}, ${pair.consistent ? "consistent" : "VIOLATION"}`,
    pair.consistent && (pair.statuses["200"] ?? 0) === (pair.statuses["409"] ?? -1),
  );
  add(
    `two instances, lease: wall ≤ 1.2 × 2L`,
    `${(pair.wallMs.median / (2 * latencyMs)).toFixed(2)} × 2L`,
    pair.wallMs.median <= 1.2 * 2 * latencyMs,
  );
}

function cpuTargets(results: Results, add: Add): void {
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
        `${(perSwitch.median / floor.cpuMsPerSwitch.median).toFixed(2)}× (floor ${ms(floor.cpuMsPerSwitch.median)} ms)`,
        perSwitch.median <= 2 * floor.cpuMsPerSwitch.median,
      );
    add(
      `app at rest, ${name}: ≤ 1 % of a core`,
      `${server.restingPercentOfCore.toFixed(2)} %`,
      server.restingPercentOfCore <= 1,
    );
  }
}

export function checkTargets(results: Results, scalingLatencyMs: number): Target[] {
  const targets: Target[] = [];
  const add: Add = (target, measured, holds) => targets.push({ target, measured, holds });
  libraryTargets(results, add);
  loneSwitchTargets(results, add);
  scalingTargets(results, add, scalingLatencyMs);
  bystanderTargets(results, add);
  twoInstanceTargets(results, add, scalingLatencyMs);
  cpuTargets(results, add);
  return targets;
}
