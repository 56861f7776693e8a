"use client";

import { useQuery } from "@tanstack/react-query";
import { api } from "../api";
import type { ListedExperiment } from "./types";

// While a card awaits a part this instance is told of (a redis-server restarting, a client still connecting when
// the list was read), the list is read again this often: the card becomes runnable when its part answers, without
// a reload. A part the instance was not started with is not awaited.
const partsRecheckMs = 5_000;

/** The experiments as `GET /api/lab/experiments` lists them, each with its lesson. */
export const useExperiments = () =>
  useQuery({
    queryKey: ["experiments"],
    queryFn: () => api<{ experiments: ListedExperiment[] }>("/api/lab/experiments"),
    refetchInterval: (query) =>
      query.state.data?.experiments.some((card) => card.awaitingParts) ? partsRecheckMs : false,
  });

/** The experiments in the course's teaching order. */
export const inCourseOrder = (experiments: ListedExperiment[]): ListedExperiment[] =>
  [...experiments].sort((a, b) => a.lesson - b.lesson);
