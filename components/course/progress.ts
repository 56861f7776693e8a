"use client";

import { storedKeys, useStored } from "../learn/stored";
import type { LastRun } from "../learn/useExperimentRun";

/** Where the course keeps that a lesson's shipped run was opened (a lesson done without running it live). */
export const shippedOpenedKey = (experimentId: string) => `lease-lock-lab.course.shipped-opened.${experimentId}`;

export type LessonProgress =
  | { done: false; predicted: boolean }
  | { done: true; predicted: boolean; how: "live" | "shipped"; verdict: LastRun["verdict"] | null };

/** How far this browser got with a lesson: predicted, run live (and its verdict), or its shipped run opened. */
export function useLessonProgress(experimentId: string): LessonProgress {
  const [last] = useStored<LastRun>(storedKeys.lastRun(experimentId));
  const [predicted] = useStored<string>(storedKeys.prediction(experimentId));
  const [shipped] = useStored<boolean>(shippedOpenedKey(experimentId));
  if (last) return { done: true, predicted: predicted !== null, how: "live", verdict: last.verdict };
  if (shipped) return { done: true, predicted: predicted !== null, how: "shipped", verdict: null };
  return { done: false, predicted: predicted !== null };
}

/** A lesson's progress in a few words, for the table of contents. */
export function progressWords(progress: LessonProgress): string {
  if (!progress.done) return progress.predicted ? "predicted" : "not started";
  if (progress.how === "shipped") return "done (shipped run)";
  return progress.verdict === "as-expected" ? "done, as expected" : "done, unexpected";
}
