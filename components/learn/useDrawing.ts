"use client";

import { useCallback, useMemo, useState } from "react";
import { laneLabel, laneLabels } from "@/lib/lab/experiments/run-facts";
import { answerWords, type Lane } from "@/lib/lab/lane";
import { foldsByDefault, laneAt } from "./replay";
import type { RunRecord } from "./types";

/** The lanes as they stood at `at`, grouped by variant in the run's order; the variants folded, and unfolding. */
export function useDrawing(run: RunRecord, at: number) {
  const labels = useMemo(() => laneLabels(run.history), [run]);
  const [unfolded, setUnfolded] = useState<number[]>([]);
  const variantOf = useMemo(() => {
    const index = new Map(run.variants.flatMap((variant, n) => variant.operationIds.map((id) => [id, n] as const)));
    return (operationId: string) => index.get(operationId) ?? run.variants.length;
  }, [run]);
  const folded = useMemo(() => foldsByDefault(run).filter((index) => !unfolded.includes(index)), [run, unfolded]);
  const groupOf = useCallback(
    (lane: Lane) => {
      const index = variantOf(lane.operationId);
      const variant = run.variants[index];
      const label = variant ? `${index + 1} · ${variant.label}` : "outside every variant";
      return { key: String(index), label, folded: folded.includes(index) };
    },
    [run, variantOf, folded],
  );
  const lanes = run.lanes
    .map((lane) => laneAt(lane, at))
    .filter((lane) => lane !== null)
    .sort(
      (a, b) =>
        variantOf(a.operationId) - variantOf(b.operationId) || Date.parse(a.requestedAt) - Date.parse(b.requestedAt),
    );
  const toggle = (index: number) =>
    setUnfolded((all) => (all.includes(index) ? all.filter((each) => each !== index) : [...all, index]));
  const laneCaption = useCallback(
    (lane: Lane) => `${laneLabel(labels, lane.operationId)} · ${answerWords(lane)}`,
    [labels],
  );
  return { lanes, groupOf, folded, toggle, laneCaption };
}
