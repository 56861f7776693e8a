"use client";

import { useQuery } from "@tanstack/react-query";
import type { RunRecord } from "../learn/types";

/** Where `npm run course:record` puts a lesson's known-good run: a static file, served as it is. */
export const shippedRunUrl = (experimentId: string) => `/course/runs/${experimentId}.json`;

/**
 * A lesson's shipped run: a known-good run recorded on a quiet machine and committed, replayed as it was
 * recorded (no database, no run). Null when the lesson has none.
 */
export function useShippedRun(experimentId: string, enabled = true) {
  return useQuery({
    queryKey: ["shipped-run", experimentId],
    enabled,
    staleTime: Infinity,
    queryFn: async (): Promise<RunRecord | null> => {
      const answer = await fetch(shippedRunUrl(experimentId));
      if (answer.status === 404) return null;
      if (!answer.ok) throw new Error(`${shippedRunUrl(experimentId)} answered ${answer.status}`);
      return (await answer.json()) as RunRecord;
    },
  });
}
