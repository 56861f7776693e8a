/**
 * A saved run at one moment: its lanes cut at that moment (what had started, what had ended, what was
 * answered), who held the lease then, and the last state the run read before it. Pure, from the record.
 */
import { isRefused, leaseEnd } from "../../lib/lab/lane";
import type { Lane, RunMarker, RunRecord, RunSnapshot } from "./types";

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

/** The run's span: from its first request to the last thing it recorded, its last reading of the state included. */
export function spanOf(run: RunRecord): { from: number; to: number } {
  const moments = momentsOf(run);
  if (moments.length === 0) return { from: ms(run.startedAt), to: ms(run.endedAt) };
  const lastRead = Math.max(...run.snapshots.map((snapshot) => ms(snapshot.at)));
  return { from: moments[0]!, to: Math.max(moments.at(-1)!, lastRead) };
}

/** The fact the moment `at` has reached last (its index in `steps`), or null before the first. */
export function factIndexAt(steps: RunMarker[], at: number): number | null {
  const index = steps.findLastIndex((step) => ms(step.at) <= at);
  return index < 0 ? null : index;
}

/** The facts the moment `at` has reached, as the picture's numbered marks (at the run's first moment, none). */
export const factMarks = (steps: RunMarker[], at: number, from: number) =>
  steps
    .filter((step) => at > from && ms(step.at) <= at)
    .map((step) => ({
      label: String(step.n),
      at: ms(step.at),
      operationId: step.operationId,
      description: step.text,
      caption: factCaption(step),
    }));

/** A fact in one short line, for the picture: its caption, or (in runs saved before captions) its text cut down. */
export const factCaption = (step: RunMarker): string =>
  step.caption ?? step.text.replace(/^[^:]*: /, "").replace(/ \([\d,]+ ms after it started\)$/, "");

/**
 * The variants a run folds by default: one whose many operations would each take a row (the sampled
 * switches of q3-ttl-too-long) draws them in one, so the picture leads with its point. Refused requests
 * share a row anyway.
 */
export const foldsByDefault = (run: RunRecord): number[] =>
  run.variants.flatMap((variant, index) => {
    const rows = run.lanes.filter((lane) => variant.operationIds.includes(lane.operationId) && !isRefused(lane));
    return rows.length > foldAbove ? [index] : [];
  });

const foldAbove = 12;

/** Who held the lease at `at` (acquired, not yet released nor expired), from the lanes. */
export function leaseHolderAt(lanes: Lane[], at: number): Lane | null {
  return lanes.find((lane) => lane.lease && ms(lane.lease.acquiredAt) <= at && at < leaseEnd(lane.lease)) ?? null;
}

/** The lease row at `at`: who held it (a lane, when one did), its fence and expiry, and the read it comes from. */
export interface LeaseRow {
  held: boolean;
  holder: Lane | null;
  fence: string | null;
  expiresAt: string | null;
  /** The moment the run read it, when the row is known from a read rather than from the lanes. */
  readAt: string | null;
}

/**
 * The lease row at `at`: from the lanes (each lease from its acquisition to its release or expiry), unless the
 * run read the row after the last thing the lanes say happened to a lease, and then as it was read. A save
 * that wiped the lock columns (a mapped lock column) leaves the wiped holder's band on its lane to the expiry it
 * chose; the read after it says the row was free, or another's.
 */
export function leaseRowAt(run: RunRecord, at: number): LeaseRow {
  const lastLeaseEvent = Math.max(
    ...run.lanes
      .flatMap((lane) => (lane.lease ? [lane.lease.acquiredAt, lane.lease.releasedAt, lane.lease.expiresAt] : []))
      .filter((moment): moment is string => moment !== null && ms(moment) <= at)
      .map(ms),
    -Infinity,
  );
  const read = snapshotAt(run, at).state;
  if (read && ms(read.at) >= lastLeaseEvent) {
    const variant = run.variants.findLast((each) => ms(each.startedAt) <= ms(read.at));
    // Fences count again from the seed in each variant: the holder is of the variant the row was read in.
    const holder = read.lease?.held
      ? (run.lanes.find(
          (lane) =>
            lane.lease?.fence === read.lease!.fence && (variant?.operationIds.includes(lane.operationId) ?? true),
        ) ?? null)
      : null;
    const held = read.lease?.held ?? false;
    return {
      held,
      holder,
      fence: held ? read.lease!.fence : null,
      expiresAt: held ? read.lease!.expiresAt : null,
      readAt: read.at,
    };
  }
  const holder = leaseHolderAt(run.lanes, at);
  return {
    held: holder !== null,
    holder,
    fence: holder?.lease?.fence ?? null,
    expiresAt: holder?.lease?.expiresAt ?? null,
    readAt: null,
  };
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
