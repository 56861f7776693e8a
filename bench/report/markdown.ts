/**
 * `npx tsx bench/report/markdown.ts [bench/results/latest.json]`: docs/performance.md's tables from one run's
 * results, printed as Markdown: the run's line (date, machine, load, commit), whose the CPU is, and the targets.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { cpuServerNames, type CpuServerName } from "../app-cpu";
import { floorLoadName, type FloorWaveResult } from "../floor-waves";
import { repeated, type Repeated } from "../stats";
import {
  bystanderFloorsAt,
  cpuOf,
  floorBystanderLoadsOf,
  floorLoadsOf,
  floorsAt,
  leaseOverNoneAt,
  in2L,
  ms,
  spread,
  type Results,
} from "./results";
import type { Target } from "./targets";

interface Run extends Results {
  mode: string;
  durationSeconds: number;
  machine: {
    cpus: string[];
    cores: number;
    loadAverageBefore: number[];
    loadAverageAfter: number[];
    cpuProbeMs?: { before: number; after: number };
  };
  versions: { node: string; postgres: string; commit: string; next: string };
  settings: { scalingLatencyMs: number };
  targets: Target[];
}

const row = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
const table = (header: string[], rows: (string | number)[][]) =>
  [row(header), row(header.map(() => "---")), ...rows.map(row)].join("\n");

function runLine(run: Run): string {
  const { machine, versions } = run;
  const probe = machine.cpuProbeMs ? `, CPU probe ${machine.cpuProbeMs.before} / ${machine.cpuProbeMs.after} ms` : "";
  return (
    `${run.mode} run of ${run.date.slice(0, 10)} at ${versions.commit}: ${machine.cores} × ${machine.cpus[0]}, ` +
    `load average ${machine.loadAverageBefore[0]} before and ${machine.loadAverageAfter[0]} after${probe}; ` +
    `Node.js ${versions.node}, Next.js ${versions.next}, ${versions.postgres.split(" on ")[0]}; ${run.durationSeconds} s.`
  );
}

function cpuTable(run: Run): string {
  const figure = (name: CpuServerName, load: "many" | "one" | "page") => {
    const result = cpuOf(run, name, load);
    return result ? `${spread(result.cpuMsPerSwitch)}` : "—";
  };
  const many = cpuOf(run, "lab on", "many")?.users ?? 64;
  return table(
    ["server", `K = ${many}`, "K = 1", "page read + switch, K = 1"],
    cpuServerNames.map((name) => [name, figure(name, "many"), figure(name, "one"), figure(name, "page")]),
  );
}

/** How much of each server's CPU ran on its main thread (what a V8 profile sees), beside all of it. */
function mainThreadTable(run: Run): string {
  const figure = (name: CpuServerName, load: "many" | "one") => {
    const result = cpuOf(run, name, load);
    if (!result?.mainThreadMsPerSwitch) return "—";
    const [main, all] = [result.mainThreadMsPerSwitch.median, result.cpuMsPerSwitch.median];
    return `${ms(main)} of ${ms(all)} (${Math.round((100 * main) / all)} %)`;
  };
  const many = cpuOf(run, "lab on", "many")?.users ?? 64;
  return table(
    ["server", `main thread, K = ${many}`, "main thread, K = 1"],
    cpuServerNames.map((name) => [name, figure(name, "many"), figure(name, "one")]),
  );
}

function wholeTable(run: Run): string {
  const median = (name: CpuServerName) => cpuOf(run, name, "many")?.cpuMsPerSwitch.median ?? NaN;
  return table(
    ["part of the app's CPU per switch, K at once", "ms"],
    [
      ["Next.js's own, with one pg statement (next-min)", ms(median("next-min"))],
      ["ours, the product's path (lab off − next-min)", ms(median("lab off") - median("next-min"))],
      [
        "of which the least switch's 2 more statements and 2 calls, in Next.js (next-bare − next-min)",
        ms(median("next-bare") - median("next-min")),
      ],
      ["of which the rest (lab off − next-bare)", ms(median("lab off") - median("next-bare"))],
      ["the lab's (lab on − lab off)", ms(median("lab on") - median("lab off"))],
      ["the machine's floor for a switch (bare)", ms(median("bare"))],
      ["our switch over that floor (outside Next.js − bare)", ms(median("outside Next.js") - median("bare"))],
    ],
  );
}

/**
 * Waves on the app and the floors, taking turns: each in units of 2L, the app paired with next-bare, and each one's
 * lease paired with its own switch without a lock.
 */
function floorWavesTable(run: Run): string {
  const inUnitsOf2L = (result: FloorWaveResult | undefined) =>
    result ? spread(repeated(result.wallMs.runs.map((wall) => in2L(wall, run.settings.scalingLatencyMs)))) : "—";
  const ratio = (paired: Repeated | null) => (paired ? spread(paired) : "—");
  return table(
    [
      "load",
      "app (lab on, lease), × 2L",
      "next-bare, × 2L",
      "bare, × 2L",
      "app ÷ next-bare, paired",
      "lease ÷ none: app",
      "lease ÷ none: next-bare",
    ],
    floorLoadsOf(run).map((load) => {
      const { app, part, bare, paired } = floorsAt(run, load);
      const overNone = leaseOverNoneAt(run, load);
      const walls = [app, part, bare].map(inUnitsOf2L);
      const ratios = [paired, overNone.app?.ratio ?? null, overNone.part?.ratio ?? null];
      return [floorLoadName(load), ...walls, ...ratios.map(ratio)];
    }),
  );
}

/** A bystander on the app and on next-bare, taking turns: read p99, and as a multiple of each one's own idle p99. */
function floorBystanderTable(run: Run): string {
  const text = (side: { p99: number; overIdle: number } | undefined) =>
    side ? `${ms(side.p99)} ms, ${side.overIdle.toFixed(2)}×` : "—";
  return table(
    ["load", "app (lab on, lease): p99, × its idle", "next-bare: p99, × its idle"],
    floorBystanderLoadsOf(run).map((load) => {
      const floors = bystanderFloorsAt(run, load.users, load.poolSize);
      return [floorLoadName(load), text(floors?.app), text(floors?.part)];
    }),
  );
}

const file = process.argv[2] ?? path.join(import.meta.dirname, "..", "results", "latest.json");
const run = JSON.parse(readFileSync(file, "utf8")) as Run;
const holding = run.targets.filter((each) => each.holds).length;
const explained = run.targets.filter((each) => each.explainedBy).length;
const explainedText =
  explained > 0 ? `; ${explained} of the misses are explained by a part not ours (targets.ts's \`explainedMiss\`)` : "";
const verdict = (each: Target) =>
  each.holds ? "yes" : each.explainedBy ? `no, explained: ${each.explainedBy}` : "**no**";
console.log(
  [
    runLine(run),
    "",
    "CPU per switch, ms, median [min–max] of waves:",
    "",
    cpuTable(run),
    "",
    "Of it on the servers' main threads (ms per switch, medians; the rest ran on V8's helper threads, bench/v8-threads-cpu.ts):",
    "",
    mainThreadTable(run),
    "",
    wholeTable(run),
    "",
    ...(run.floorWaves?.length
      ? ["The app and the floors, taking turns (median [min–max] of rounds):", "", floorWavesTable(run), ""]
      : []),
    ...(run.floorBystander?.length
      ? ["A bystander on the app and on next-bare, taking turns:", "", floorBystanderTable(run), ""]
      : []),
    `${holding} of ${run.targets.length} targets hold${explainedText}:`,
    "",
    table(
      ["step", "target", "measured", "holds"],
      run.targets.map((each) => [each.step, each.target, each.measured, verdict(each)]),
    ),
  ].join("\n"),
);
