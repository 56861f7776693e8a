/** What one run of `npm run bench` measured, as the targets, the tables and the charts read it. */
import type { AppCpuResult } from "../app-cpu";
import type { BystanderResult, SingleSwitchResult, TwoInstancesResult, WaveResult } from "../http-load";
import type { ContentionResult, MicroResult } from "../lease-micro";
import { repeated, type Repeated } from "../stats";

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

/** The idle bystander's read p99 over its runs: the reference for the loaded ones. */
export const idleReadP99 = (runs: BystanderResult[]): Repeated =>
  repeated(runs.filter((run) => run.strategy === "idle").map((run) => run.reads.p99 ?? run.reads.max));

/** Milliseconds as the tables print them. */
export const ms = (value: number | null) => (value === null || !Number.isFinite(value) ? "n/a" : value.toFixed(2));

/** A figure over repetitions as `median [min–max]`. */
export const spread = (figure: Repeated, digits = 2, unit = "") =>
  `${figure.median.toFixed(digits)}${unit} [${figure.min.toFixed(digits)}–${figure.max.toFixed(digits)}]`;

/** `count×status` for each status answered. */
export const answersText = (statuses: Record<string, number>) =>
  Object.entries(statuses)
    .map(([status, count]) => `${count}×${status}`)
    .join(" ");
