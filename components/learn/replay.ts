/**
 * A saved run at one moment: its lanes cut at that moment (what had started, what had ended, what was
 * answered), who held the lease then, and the last state the run read before it. Pure, from the record.
 */
import { leaseEnd } from "@/lib/lab/lane";
import type { Lane, RunRecord, RunSnapshot } from "./types";

const ms = (iso: string): number => Date.parse(iso);

/** The lane as it stood at `at`, or null when it had not been requested yet. */
export function laneAt(lane: Lane, at: number): Lane | null {
  if (ms(lane.requestedAt) > at) return null;
  const answered = lane.answeredAt !== null && ms(lane.answeredAt) <= at;
  const lease = lane.lease && ms(lane.lease.acquiredAt) <= at ? lane.lease : null;
  return {
    ...lane,
    answeredAt: answered ? lane.answeredAt : null,
    status: answered ? lane.status : null,
    problemType: answered ? lane.problemType : null,
    phases: lane.phases
      .filter((phase) => ms(phase.startedAt) <= at)
      .map((phase) =>
        phase.endedAt !== null && ms(phase.endedAt) > at ? { ...phase, endedAt: null, outcome: null } : phase,
      ),
    lease: lease && {
      ...lease,
      releasedAt: lease.releasedAt !== null && ms(lease.releasedAt) <= at ? lease.releasedAt : null,
    },
  };
}

/** Where a step lands: every moment something started, ended or was answered, and each numbered fact. */
export function momentsOf(run: RunRecord): number[] {
  const moments = new Set<number>();
  for (const lane of run.lanes) {
    moments.add(ms(lane.requestedAt));
    if (lane.answeredAt) moments.add(ms(lane.answeredAt));
    for (const phase of lane.phases) {
      moments.add(ms(phase.startedAt));
      if (phase.endedAt) moments.add(ms(phase.endedAt));
    }
    if (lane.lease) moments.add(leaseEnd(lane.lease));
  }
  for (const step of run.steps) moments.add(ms(step.at));
  return [...moments].sort((a, b) => a - b);
}

/** The run's span: from its first request to the last thing it recorded. */
export function spanOf(run: RunRecord): { from: number; to: number } {
  const moments = momentsOf(run);
  if (moments.length === 0) return { from: ms(run.startedAt), to: ms(run.endedAt) };
  return { from: moments[0]!, to: moments.at(-1)! };
}

/** Who held the lease at `at` (acquired, not yet released nor expired), from the lanes. */
export function leaseHolderAt(lanes: Lane[], at: number): Lane | null {
  return lanes.find((lane) => lane.lease && ms(lane.lease.acquiredAt) <= at && at < leaseEnd(lane.lease)) ?? null;
}

/** The last state the run read at or before `at`, and the last audit it read in the same variant. */
export function snapshotAt(run: RunRecord, at: number): { state: RunSnapshot | null; audit: RunSnapshot | null } {
  const variant = run.variants.findLast((each) => ms(each.startedAt) <= at);
  const seen = run.snapshots.filter((snapshot) => ms(snapshot.at) <= at);
  const inVariant = variant ? seen.filter((snapshot) => ms(snapshot.at) >= ms(variant.startedAt)) : seen;
  return {
    state: inVariant.at(-1) ?? null,
    audit: inVariant.findLast((snapshot) => snapshot.audit !== null) ?? null,
  };
}
