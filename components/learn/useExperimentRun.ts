"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "../api";
import { useNow } from "../useNow";
import { storedKeys, useStored } from "./stored";
import type { ExperimentRun, ListedExperiment } from "./types";

/** A card's last run, as this browser remembers it (it survives navigating away and back). */
export interface LastRun {
  runId: string;
  verdict: ExperimentRun["verdict"];
}

/** Runs one experiment as its Run button does: the run, its elapsed seconds, and the last run kept. */
export function useExperimentRun(card: ListedExperiment) {
  const queryClient = useQueryClient();
  const [last, setLast] = useStored<LastRun>(storedKeys.lastRun(card.id));
  const [startedAt, setStartedAt] = useState(0);
  const run = useMutation({
    mutationFn: () => api<ExperimentRun>(`/api/lab/experiments/${card.id}/run`, { method: "POST" }),
    onSuccess: (result) => {
      setLast({ runId: result.runId, verdict: result.verdict });
      // The run put the lab back as it found it: the rest of the page reads it again.
      void queryClient.invalidateQueries({
        predicate: (query) => query.queryKey[0] !== "experiments" && query.queryKey[0] !== "run",
      });
    },
  });
  const now = useNow(run.isPending, 1_000);
  const start = () => {
    if (run.isPending || !card.available) return;
    setStartedAt(Date.now());
    run.mutate();
  };
  return { run, last, start, elapsedSeconds: Math.max(0, Math.round((now - startedAt) / 1000)) };
}
