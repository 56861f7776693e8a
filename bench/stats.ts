/** Percentiles and the summaries the report prints: nearest-rank on sorted samples, spread across repetitions. */

export const percentile = (sorted: readonly number[], p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;

export const median = (values: readonly number[]): number =>
  percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );

export interface Distribution {
  count: number;
  p50: number;
  /** Null below 200 samples, where a p95 means little. */
  p95: number | null;
  /** Null below 1,000 samples. */
  p99: number | null;
  max: number;
}

export function distribution(samples: readonly number[]): Distribution {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: percentile(sorted, 0.5),
    p95: sorted.length >= 200 ? percentile(sorted, 0.95) : null,
    p99: sorted.length >= 1_000 ? percentile(sorted, 0.99) : null,
    max: sorted.at(-1) ?? NaN,
  };
}

/** One figure over repetitions: the median of the repetitions, and their lowest and highest. */
export interface Repeated {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export function repeated(runs: readonly number[]): Repeated {
  return { median: median(runs), min: Math.min(...runs), max: Math.max(...runs), runs: [...runs] };
}

export const round = (value: number, digits = 3): number => Number(value.toFixed(digits));

/** Shuffles a copy (Fisher–Yates) with a seeded generator, so a run's order is reproducible from its seed. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

/** The distribution's shape for a chart: its value at every 2nd percentile, 0 (min) to 100 (max). */
export function quantiles(samples: readonly number[]): number[] {
  const sorted = [...samples].sort((a, b) => a - b);
  return Array.from({ length: 51 }, (_, index) => (index === 0 ? sorted[0]! : percentile(sorted, (index * 2) / 100)));
}
