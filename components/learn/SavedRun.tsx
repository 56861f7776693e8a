"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { api, ApiError } from "../api";
import { RunReplay, type ReplayHandle } from "./RunReplay";
import { isSweep, TtlSweepChart } from "./TtlSweepChart";
import type { RunRecord } from "./types";

export const runQuery = (runId: string) => ({
  queryKey: ["run", runId],
  queryFn: () => api<RunRecord>(`/api/lab/runs/${runId}`),
  staleTime: Infinity,
});

/** Offers the run as a file: the record as the API answers it, which the import takes back. */
function exportRun(run: RunRecord): void {
  const url = URL.createObjectURL(new Blob([JSON.stringify(run, null, 2)], { type: "application/json" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = `run-${run.experimentId}-${run.id}.json`;
  link.click();
  URL.revokeObjectURL(url);
}

/** The address of a saved run's own page, with the prediction made before it (kept in the link). */
export const runHref = (runId: string, predicted: string | null) =>
  `/learn/runs/${runId}${predicted ? `?predicted=${encodeURIComponent(predicted)}` : ""}`;

/**
 * A run's record drawn: its replay, its TTL chart if it measured one, its measured facts, its export and
 * (`link`) its own address.
 */
export function RunResult({
  record,
  title,
  link = null,
  replay,
}: {
  record: RunRecord;
  title: string;
  link?: { predicted: string | null } | null;
  replay?: React.Ref<ReplayHandle>;
}) {
  const sweep = record.observed.sweep;
  const recommended = record.observed.recommendedTtlMs;
  return (
    <div className="run-result">
      <RunReplay run={record} title={title} ref={replay} />
      {isSweep(sweep) && (
        <TtlSweepChart sweep={sweep} recommendedTtlMs={typeof recommended === "number" ? recommended : null} />
      )}
      <details>
        <summary>Measured facts</summary>
        <pre>{JSON.stringify(record.observed, null, 2)}</pre>
      </details>
      <p className="run-links">
        {link && <Link href={runHref(record.id, link.predicted)}>Open this saved run on its own page</Link>}
        <button type="button" className="quiet" onClick={() => exportRun(record)}>
          Export as JSON
        </button>
      </p>
    </div>
  );
}

/** A saved run by its id, read from the lab. */
export function SavedRun({
  runId,
  title,
  link = null,
  replay,
}: {
  runId: string;
  title: string;
  link?: { predicted: string | null } | null;
  replay?: React.Ref<ReplayHandle>;
}) {
  const run = useQuery(runQuery(runId));
  if (run.isPending) return <p className="hint">Loading the saved run…</p>;
  if (run.error instanceof ApiError && run.error.problem.status === 404)
    return <p className="hint">The last run of this experiment is no longer saved here.</p>;
  if (run.error)
    return (
      <p role="alert">
        The saved run could not be loaded:{" "}
        {run.error instanceof ApiError ? run.error.problem.detail || run.error.problem.title : run.error.message}
      </p>
    );
  return <RunResult record={run.data} title={title} link={link} replay={replay} />;
}
