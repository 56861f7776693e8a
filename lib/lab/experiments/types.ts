/** What an experiment is: its card (the question in plain words), and the run that measures the answer. */
import type { Part } from "../parts";
import type { Lesson } from "./course";
import type { Lab } from "./lab";

export interface ExperimentCard {
  id: string;
  title: string;
  /** The article's question, or the failure mode's name, in plain words. */
  question: string;
  /** The failure mode it reproduces, or null for a question that is not one. */
  failureMode: string | null;
  /** What the run should show; the verdict compares the measured facts with it. */
  expected: string;
  /** What to try by hand afterwards, on the main page. */
  tryNext: string;
  /** The production parts it runs on (started with `npm run dev -- --pgbouncer`, …); none for most. */
  needs: Part[];
}

/**
 * A card as GET /api/lab/experiments lists it: `available` is false while a part it needs is not running; its
 * lesson (minutes, goal, prediction, takeaway), its place in the course's order, and whether the 45-minute
 * class takes it.
 */
export interface ListedExperiment extends ExperimentCard, Lesson {
  available: boolean;
  /** Not available, but a part it needs is one this instance is told of and may answer soon (a restart). */
  awaitingParts: boolean;
  /** The command that starts the lab with the parts it needs, or null when it needs none. */
  startWith: string | null;
  lesson: number;
  core: boolean;
}

export interface Finding {
  /** The measured facts, never a copy of `expected`. */
  observed: Record<string, unknown>;
  /** Whether the measured facts show what `expected` says. */
  asExpected: boolean;
  /** What happened and why, in plain words, with the numbers measured. */
  explanation: string;
}

export interface Experiment extends Omit<ExperimentCard, "needs"> {
  needs?: Part[];
  run(lab: Lab): Promise<Finding>;
}
