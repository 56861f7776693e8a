/**
 * Running a Learn card as a teacher's click would, for the integration tests of the experiments: it must reach
 * "as-expected" from what it measured, and its saved run (its lanes, as the timeline recorded them, and what it
 * read of the provider, the lease row and the audit) lets a test check one of its facts independently.
 */
import { expect, inject } from "vitest";
import { appClient } from "./http-client";

export const labApp = () => appClient(inject("appUrl"));

export interface Run {
  id: string;
  runId: string;
  startedAt: string;
  endedAt: string;
  operationIds: string[];
  observed: Record<string, any>;
  verdict: string;
  explanation: string;
}

export async function run(id: string): Promise<Run> {
  const answer = await labApp().post<Run>(`/api/lab/experiments/${id}/run`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body.verdict, JSON.stringify(answer.body.observed, null, 1)).toBe("as-expected");
  expect(Date.parse(answer.body.endedAt) - Date.parse(answer.body.startedAt)).toBeLessThan(30_000);
  // Each variant of the saved run is captioned by what sets it apart, no two alike.
  const labels = (await saved(answer.body)).variants.map((variant) => variant.label);
  expect(new Set(labels).size, labels.join(" | ")).toBe(labels.length);
  return answer.body;
}

interface Phase {
  name: string;
  outcome: string | null;
}

export interface SavedRun {
  variants: { label: string }[];
  lanes: { operationId: string; phases: Phase[]; lease: { acquiredAt: string } | null }[];
  history: { f: string; type: string }[];
  snapshots: {
    localPrimaryIdentityId: string | null;
    lease: { held: boolean; expiresAt: string | null; fence: string } | null;
    audit: { consistent: boolean; violations: string[] } | null;
  }[];
}

export const saved = async (result: Run): Promise<SavedRun> =>
  (await labApp().get(`/api/lab/runs/${result.runId}`)).body;
export const phasesOf = (run: SavedRun, operationId: string, name?: string): Phase[] =>
  run.lanes
    .find((lane) => lane.operationId === operationId)!
    .phases.filter((phase) => (name ? phase.name === name : true));
/** The provider writes (unlink, link) an operation got a 2xx for, as its lane recorded them. */
export const writesApplied = (run: SavedRun, operationId: string): number =>
  phasesOf(run, operationId).filter(
    (phase) => (phase.name === "unlink" || phase.name === "link") && /^2\d\d$/.test(phase.outcome ?? ""),
  ).length;
/** The audit read as the run's last variant ended. */
export const lastAudit = (run: SavedRun) => run.snapshots.findLast((snapshot) => snapshot.audit)!.audit!;
export const tookOver = (run: SavedRun, operationId: string): boolean =>
  phasesOf(run, operationId, "acquire").some((phase) => phase.outcome === "took-over");
