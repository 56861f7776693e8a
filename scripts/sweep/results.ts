/**
 * One shape's sweep results, in `bench/results/verdict-sweep-<shape>.json`: written after every run, so that
 * an interrupted sweep resumes where it stopped (`--resume`, same commit and runs each), with the machine, the
 * date, the commit, and each experiment's tally, an experiment not available in the shape said as such.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { startCommands, type Shape } from "./shapes";

export interface Tally {
  experimentId: string;
  /** False when a part it needs does not run in this shape: it was not run, and `needs` says why. */
  available: boolean;
  needs: string[];
  asExpected: number;
  unexpected: { runId: string; explanation: string }[];
  /** Each run's wall time, in seconds. */
  seconds: number[];
}

export interface ShapeResults {
  shape: Shape;
  startedWith: string;
  /** When the results were last written. */
  date: string;
  /** The commit the apps ran (`-dirty`: with changes not committed). */
  commit: string;
  machine: string;
  runsEach: number;
  labsAtATime: number;
  /** Every available experiment has run `runsEach` times. */
  complete: boolean;
  /** Wall time of the shape's runs, resumed ones added up. */
  wallSeconds: number;
  experiments: Tally[];
}

export const resultsFile = (shape: Shape): string => `bench/results/verdict-sweep-${shape}.json`;

/** The commit the apps run, read once: the checkout may move on while the sweep runs. */
export function currentCommit(): string {
  const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"]).toString().trim();
  const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"]).toString().trim() !== "";
  return dirty ? `${commit}-dirty` : commit;
}

const machine = (): string =>
  `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`;

/** The results to go on from: the file's, when resuming the same commit and runs, else a fresh start. */
export function resultsToResume(shape: Shape, commit: string, runsEach: number, labs: number, resume: boolean) {
  const file = resultsFile(shape);
  if (resume && existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, "utf8")) as ShapeResults;
    if (saved.commit === commit && saved.runsEach === runsEach) return saved;
    console.log(`[sweep] ${file} is of ${saved.commit}, ${saved.runsEach} runs each: starting ${shape} afresh`);
  }
  const fresh: ShapeResults = {
    shape,
    startedWith: startCommands[shape],
    date: new Date().toISOString(),
    commit,
    machine: machine(),
    runsEach,
    labsAtATime: labs,
    complete: false,
    wallSeconds: 0,
    experiments: [],
  };
  return fresh;
}

/** Runs an available experiment still owes. */
export const runsLeft = (tally: Tally, runsEach: number): number =>
  tally.available ? Math.max(0, runsEach - tally.asExpected - tally.unexpected.length) : 0;

export function writeResults(results: ShapeResults): void {
  results.date = new Date().toISOString();
  results.machine = machine();
  results.complete = results.experiments.every((tally) => runsLeft(tally, results.runsEach) === 0);
  writeFileSync(resultsFile(results.shape), `${JSON.stringify(results, null, 2)}\n`);
}
