/** The run's SVG charts in bench/results/: K users at once, one switch alone, the library, the bystander. */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { lineChart, type Series } from "../charts";
import type { Strategy } from "../http-load";
import { idleReadP99, readP99, type Results } from "./results";

const colors: Record<string, string[]> = {
  lease: ["#1b7f3b", "#2ca25f", "#66c2a4"],
  transaction: ["#b2182b", "#d6604d", "#f4a582"],
  advisory: ["#5e3c99", "#8073ac", "#b2abd2"],
  optimistic: ["#e08214"],
  none: ["#555555"],
  "bare-updates": ["#555555"],
  "library-alone": ["#66c2a4"],
  "raw-sql": ["#d6604d"],
  "raw-sql-prepared": ["#2166ac"],
  library: ["#1b7f3b"],
};

function scalingChart(results: Results, latencyMs: number): string {
  const scaling: Series[] = [];
  // `none` is measured as the lease's reference, not drawn: the lesson is the lease against the queues.
  const drawn = results.scaling.filter((wave) => wave.strategy !== "none");
  const poolSizes = [...new Set(results.scaling.map((wave) => wave.poolSize))];
  for (const group of [...new Set(drawn.map((wave) => `${wave.strategy}|${wave.poolSize}`))]) {
    const [strategy, poolSize] = group.split("|") as [Strategy, string];
    const waves = results.scaling.filter((wave) => wave.strategy === strategy && String(wave.poolSize) === poolSize);
    const shade = colors[strategy]![poolSizes.indexOf(Number(poolSize))] ?? "#999";
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
    points: userCounts.map((users) => [users, 2 * latencyMs]),
  });
  return lineChart({
    title: `K users switching at once: time until all answered (L = ${latencyMs} ms)`,
    xLabel: "K users switching at once",
    yLabel: "wall time (ms, log)",
    series: scaling,
    xLog: true,
    yLog: true,
    xTicks: userCounts,
  });
}

function singleChart(results: Results): string {
  const single: Series[] = results.single.map((run) => ({
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
  });
  return lineChart({
    title: `One switch alone over HTTP, per strategy (L = ${latency} ms): distribution`,
    xLabel: "answer time (ms)",
    yLabel: "percentile",
    series: single,
    yTicks: [0, 25, 50, 75, 90, 100],
  });
}

function microChart(results: Results): string {
  const micro = Object.entries(results.micro.variants).map(([variant, figures]) => ({
    label: `${variant}: p50 ${figures.p50.median.toFixed(2)} ms`,
    color: colors[variant]![0]!,
    points: figures.shape.map((value, index) => [value, index * 2] as [number, number]),
  }));
  return lineChart({
    title: "One acquire + release straight on PostgreSQL: distribution",
    xLabel: "time (ms, log)",
    yLabel: "percentile",
    series: micro,
    xLog: true,
    yTicks: [0, 25, 50, 75, 90, 98, 100],
  });
}

function bystanderChart(results: Results): string {
  const idleP99 = idleReadP99(results.bystander).median;
  const bystanderCounts = [...new Set(results.bystander.filter((run) => run.users > 0).map((run) => run.users))];
  const bystander: Series[] = (["lease", "transaction"] as const).map((strategy) => ({
    label: `${strategy}: read p99`,
    color: colors[strategy]![0]!,
    points: results.bystander
      .filter((run) => run.strategy === strategy)
      .map((run) => [run.users, readP99(run.reads)] as [number, number]),
  }));
  bystander.push({
    label: "1.5 × idle p99",
    color: "#1b7f3b",
    dashed: true,
    points: bystanderCounts.map((users) => [users, 1.5 * idleP99]),
  });
  return lineChart({
    title: `A bystander's reads while K users switch (P = ${results.bystander[0]!.poolSize})`,
    xLabel: "K users switching",
    yLabel: "read p99 (ms, log)",
    series: bystander,
    xLog: true,
    yLog: true,
    xTicks: bystanderCounts,
  });
}

export function writeCharts(results: Results, directory: string, scalingLatencyMs: number): void {
  const charts = {
    "scaling.svg": scalingChart(results, scalingLatencyMs),
    "switch-latency.svg": singleChart(results),
    "lease-micro.svg": microChart(results),
    "bystander.svg": bystanderChart(results),
  };
  for (const [file, svg] of Object.entries(charts)) writeFileSync(path.join(directory, file), svg);
}
