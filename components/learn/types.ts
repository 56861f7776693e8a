// Types only (erased at build): the Learn view shares the server's shapes without bundling server code.
export type { ListedExperiment } from "@/lib/lab/experiments/types";
export type { ExperimentRun } from "@/lib/lab/experiments/runner";
export type { RunRecord, RunSnapshot, RunMarker, HistoryOp } from "@/lib/lab/experiments/runs";
export type { Lane } from "@/lib/lab/lane";
export type { ProviderCall } from "@/lib/provider-sim/lab-client";
