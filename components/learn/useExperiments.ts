"use client";

import { useQuery } from "@tanstack/react-query";
import { api } from "../api";
import type { ListedExperiment } from "./types";

/** The experiments as `GET /api/lab/experiments` lists them, each with its lesson. */
export const useExperiments = () =>
  useQuery({
    queryKey: ["experiments"],
    queryFn: () => api<{ experiments: ListedExperiment[] }>("/api/lab/experiments"),
  });

/** The experiments in the course's teaching order. */
export const inCourseOrder = (experiments: ListedExperiment[]): ListedExperiment[] =>
  [...experiments].sort((a, b) => a.lesson - b.lesson);
