/**
 * The numbered facts of a run, read off what it recorded (never off what the experiment expected): a
 * crash, a pause, a lease that expired unreleased, a take-over, the first refusal, a late write refused,
 * the key events of key-events.ts, the facts the experiment measured itself (a lock left granted, a
 * restart), and the audit at the end of each variant. Each is a marker on the picture and a step of the
 * answer, timed from the start of its own operation.
 */
import { problemSlug } from "../../core/problems";
import type { Lane } from "../lane";
import { collisionFact, failureFacts, longestWaitFact, type Fact } from "./key-events";
import type { MeasuredFact } from "./run-recorder";
import type { HistoryOp, RunMarker, RunSnapshot, RunVariant } from "./runs";

const ms = (iso: string): number => Date.parse(iso);
const slug = (problemType: string | null): string => problemSlug(problemType) ?? "";

/** The run's words for each request (its attempt's label), and a short id for one it did not make itself. */
export function laneLabels(history: HistoryOp[]): Map<string, string> {
  return new Map(history.map((op) => [op.operationId, op.label] as const));
}

export const laneLabel = (labels: Map<string, string>, operationId: string): string =>
  labels.get(operationId) ?? `operation ${operationId.slice(0, 8)}`;

/**
 * A take-over, as the lanes show it: of an expired lease, or of one whose holder's expiry was still ahead
 * (something else had cleared the lock columns).
 */
function takeOver(lanes: Lane[], lane: Lane, at: string, name: (lane: Lane) => string): Pick<Fact, "what" | "short"> {
  const unexpired = lanes.find(
    (other) =>
      other !== lane &&
      other.lease &&
      ms(other.lease.acquiredAt) < ms(at) &&
      ms(other.lease.expiresAt) > ms(at) &&
      (other.lease.releasedAt === null || ms(other.lease.releasedAt) > ms(at)),
  );
  return unexpired
    ? {
        what: `takes the lease over, though ${name(unexpired)}'s had not expired: the lock columns no longer held it`,
        short: "takes the lease over before it expired",
      }
    : { what: "takes the expired lease over" };
}

/** What each lane's phases and lease say: crashes, pauses, take-overs, fenced calls, expiries, late writes. */
function laneFacts(lane: Lane, mine: Lane[], variant: RunVariant, name: (lane: Lane) => string): Fact[] {
  const facts: Fact[] = [];
  for (const phase of lane.phases) {
    if (phase.name === "crashed")
      facts.push({ at: phase.startedAt, lane, what: "crashes: no release follows", weight: 1 });
    if (phase.name === "paused")
      facts.push({
        at: phase.startedAt,
        lane,
        what: `pauses${phase.endedAt ? ` ${ms(phase.endedAt) - ms(phase.startedAt)} ms` : ""}`,
        weight: 2,
      });
    if (phase.name === "acquire" && phase.outcome === "took-over" && phase.endedAt)
      facts.push({ at: phase.endedAt, lane, ...takeOver(mine, lane, phase.endedAt, name), weight: 1 });
    if (phase.outcome === "fenced" && phase.endedAt)
      facts.push({
        at: phase.endedAt,
        lane,
        what: `its ${phase.name} is refused by the provider (stale fence)`,
        weight: 1,
      });
  }
  const lease = lane.lease;
  if (
    lease &&
    (lease.releasedAt === null || ms(lease.releasedAt) > ms(lease.expiresAt)) &&
    ms(lease.expiresAt) <= ms(variant.endedAt)
  )
    facts.push({ at: lease.expiresAt, lane, what: "its lease expires, unreleased", weight: 3 });
  if (
    lane.status === 409 &&
    ["lease-lost", "fenced", "stale-write"].includes(slug(lane.problemType)) &&
    lane.answeredAt
  )
    facts.push({
      at: lane.answeredAt,
      lane,
      // Lost: the check before its next write failed, so that write was never sent (an earlier one may have landed).
      what:
        slug(lane.problemType) === "lease-lost"
          ? "its lease is lost: its next write is not sent (409 lease-lost)"
          : `its late write is refused (409 ${slug(lane.problemType)})`,
      weight: 1,
    });
  return facts;
}

/** The first refusal at acquisition, and how many there were. */
function refusalFact(mine: Lane[]): Fact | null {
  const refused = mine.filter((lane) =>
    lane.phases.some((phase) => phase.name === "acquire" && phase.outcome === "refused"),
  );
  const first = refused[0];
  const refusal = first?.phases.find((phase) => phase.name === "acquire" && phase.outcome === "refused");
  if (!first || !refusal?.endedAt) return null;
  const count = refused.length > 1 ? `; ${refused.length} refused in all` : "";
  return { at: refusal.endedAt, lane: first, what: `is refused: the lease is held (409)${count}`, weight: 1 };
}

/** A variant's facts, its key events first when there are too many, then in time order. */
function factsOf(lanes: Lane[], variant: RunVariant, end: RunSnapshot | undefined, context: FactContext): Fact[] {
  const mine = lanes.filter((lane) => variant.operationIds.includes(lane.operationId));
  const facts: Fact[] = [
    ...mine.flatMap((lane) => [...laneFacts(lane, mine, variant, context.name), ...failureFacts(lane)]),
    ...[refusalFact(mine), collisionFact(mine, context.name), longestWaitFact(mine)].filter((fact) => fact !== null),
    ...context.measured.flatMap((fact) => {
      const lane = mine.find((each) => each.operationId === fact.operationId);
      return lane ? [{ at: fact.at, lane, what: fact.what, weight: 1 as const }] : [];
    }),
  ];
  const last = mine.at(-1);
  if (end?.audit && last)
    facts.push({
      at: end.at,
      lane: last,
      what: end.audit.consistent
        ? "afterwards the audit is consistent"
        : `afterwards the audit finds: ${end.audit.violations.join("; ")}`,
      short: end.audit.consistent ? "the audit: consistent" : "the audit: inconsistent",
      weight: 1,
    });
  const kept = [...facts].sort((a, b) => a.weight - b.weight || ms(a.at) - ms(b.at)).slice(0, mostPerVariant);
  return kept.sort((a, b) => ms(a.at) - ms(b.at));
}

interface FactContext {
  name: (lane: Lane) => string;
  measured: MeasuredFact[];
}

/** At most this many markers a variant: a picture with more numbers than a reader can follow says less. */
const mostPerVariant = 6;

export function runMarkers(
  run: { variants: RunVariant[]; lanes: Lane[]; snapshots: RunSnapshot[]; history: HistoryOp[] },
  measured: MeasuredFact[] = [],
): RunMarker[] {
  const labels = laneLabels(run.history);
  const context: FactContext = { name: (lane) => laneLabel(labels, lane.operationId), measured };
  const facts = run.variants.flatMap((variant) =>
    factsOf(
      run.lanes,
      variant,
      // The audit read as the variant closed (before the next reset).
      run.snapshots.find((snapshot) => snapshot.audit && ms(snapshot.at) >= ms(variant.endedAt)),
      context,
    ),
  );
  return facts.map((fact, index) => {
    const after = Math.max(0, ms(fact.at) - ms(fact.lane.requestedAt));
    const who = laneLabel(labels, fact.lane.operationId);
    return {
      n: index + 1,
      at: fact.at,
      operationId: fact.lane.operationId,
      text: `${who}: ${fact.what} (${after.toLocaleString("en")} ms after it started)`,
      caption: fact.short ?? fact.what,
    };
  });
}
