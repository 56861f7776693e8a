/**
 * The numbered facts of a run, read off what it recorded (never off what the experiment expected): a
 * crash, a pause, a lease that expired unreleased, a take-over, the first refusal, a late write refused,
 * and the audit at the end of each variant. Each is a marker on the picture and a step of the answer,
 * timed from the start of its own operation.
 */
import { problemSlug } from "../../core/problems";
import type { Lane } from "../lane";
import type { HistoryOp, RunMarker, RunSnapshot, RunVariant } from "./runs";

const ms = (iso: string): number => Date.parse(iso);
const slug = (problemType: string | null): string => problemSlug(problemType) ?? "";

/** The run's words for each request (its attempt's label), and a short id for one it did not make itself. */
export function laneLabels(history: HistoryOp[]): Map<string, string> {
  return new Map(history.map((op) => [op.operationId, op.label] as const));
}

export const laneLabel = (labels: Map<string, string>, operationId: string): string =>
  labels.get(operationId) ?? `operation ${operationId.slice(0, 8)}`;

interface Fact {
  at: string;
  lane: Lane;
  what: string;
}

function factsOf(lanes: Lane[], variant: RunVariant, end: RunSnapshot | undefined): Fact[] {
  const facts: Fact[] = [];
  const mine = lanes.filter((lane) => variant.operationIds.includes(lane.operationId));
  const refused = mine.filter((lane) =>
    lane.phases.some((phase) => phase.name === "acquire" && phase.outcome === "refused"),
  );
  for (const lane of mine) {
    for (const phase of lane.phases) {
      if (phase.name === "crashed") facts.push({ at: phase.startedAt, lane, what: "crashes: no release follows" });
      if (phase.name === "paused")
        facts.push({
          at: phase.startedAt,
          lane,
          what: `pauses${phase.endedAt ? ` ${ms(phase.endedAt) - ms(phase.startedAt)} ms` : ""}`,
        });
      if (phase.name === "acquire" && phase.outcome === "took-over" && phase.endedAt)
        facts.push({ at: phase.endedAt, lane, what: "takes the expired lease over" });
      if (phase.outcome === "fenced" && phase.endedAt)
        facts.push({ at: phase.endedAt, lane, what: `its ${phase.name} is refused by the provider (stale fence)` });
    }
    const lease = lane.lease;
    if (
      lease &&
      (lease.releasedAt === null || ms(lease.releasedAt) > ms(lease.expiresAt)) &&
      ms(lease.expiresAt) <= ms(variant.endedAt)
    )
      facts.push({ at: lease.expiresAt, lane, what: "its lease expires, unreleased" });
    if (
      lane.status === 409 &&
      ["lease-lost", "fenced", "stale-write"].includes(slug(lane.problemType)) &&
      lane.answeredAt
    )
      facts.push({ at: lane.answeredAt, lane, what: `its late write is refused (409 ${slug(lane.problemType)})` });
  }
  const firstRefused = refused[0];
  const refusal = firstRefused?.phases.find((phase) => phase.name === "acquire" && phase.outcome === "refused");
  if (firstRefused && refusal?.endedAt)
    facts.push({
      at: refusal.endedAt,
      lane: firstRefused,
      what: `is refused: the lease is held (409)${refused.length > 1 ? `; ${refused.length} refused in all` : ""}`,
    });
  const last = mine.at(-1);
  if (end?.audit && last)
    facts.push({
      at: end.at,
      lane: last,
      what: end.audit.consistent
        ? "afterwards the audit is consistent"
        : `afterwards the audit finds: ${end.audit.violations.join("; ")}`,
    });
  return facts.sort((a, b) => ms(a.at) - ms(b.at));
}

/** At most this many markers a run: a picture with more numbers than a reader can follow says less. */
const mostMarkers = 12;

export function runMarkers(
  variants: RunVariant[],
  lanes: Lane[],
  snapshots: RunSnapshot[],
  history: HistoryOp[],
): RunMarker[] {
  const labels = laneLabels(history);
  const facts = variants.flatMap((variant) =>
    factsOf(
      lanes,
      variant,
      // The audit read as the variant closed (before the next reset).
      snapshots.find((snapshot) => snapshot.audit && ms(snapshot.at) >= ms(variant.endedAt)),
    ),
  );
  return facts.slice(0, mostMarkers).map((fact, index) => {
    const after = Math.max(0, ms(fact.at) - ms(fact.lane.requestedAt));
    return {
      n: index + 1,
      at: fact.at,
      operationId: fact.lane.operationId,
      text: `${laneLabel(labels, fact.lane.operationId)}: ${fact.what} (${after.toLocaleString("en")} ms after it started)`,
    };
  });
}
