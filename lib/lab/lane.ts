/**
 * The timeline's lane model, shared by the server (which records and serves lanes) and the page (which
 * draws them): a switch request's phases, its lease, and what each phase's outcome means. Pure: no
 * database, no Node, no React, so the page can import it whole.
 */
import { problemSlug } from "../core/problems";

export const phaseNames = [
  "waiting",
  "acquire",
  "recover",
  "unlink",
  "link",
  "save",
  "renew",
  "release",
  "paused",
  "crashed",
] as const;

export type PhaseName = (typeof phaseNames)[number];

/** What a provider call ended with when it got no usable answer (the provider log's `outcome` words). */
export type ProviderCallOutcome = "network-error" | "timeout" | "applied-late" | "client-closed" | "fenced" | "failed";

/** A provider call's HTTP status, as a phase outcome: "200", "404", … */
export type HttpStatusOutcome = `${number}`;

/** Every word a phase may end with, by the phase that says it. */
export type PhaseOutcome =
  // acquire
  | "won"
  | "refused"
  | "took-over"
  // waiting (a pooled connection, then the strategy's lock; or, before a recovery, for an earlier switch's
  // calls to stop being able to land); paused (a lab fault)
  | "connected"
  | "locked"
  | "settled"
  | "resumed"
  // save
  | "saved"
  // release
  | "released"
  | "found-nothing"
  | "kept"
  // renew
  | "renewed"
  | "lost"
  // crashed (a lab fault)
  | "crashed"
  // a save, a release, a keep
  | "failed"
  // still open when the request was answered
  | "unfinished"
  | ProviderCallOutcome
  | HttpStatusOutcome;

export interface Phase {
  name: PhaseName;
  startedAt: string;
  endedAt: string | null;
  outcome: PhaseOutcome | null;
  detail: string | null;
  /** The provider accounts a provider phase touched: where two operations can collide. */
  accounts?: string[];
  /**
   * A provider call that got no answer: how many requests it sent (its retries included), which the audit
   * finds in the provider's log once the provider is done with each.
   */
  attempts?: number;
}

/** A lane's lease: held from `acquiredAt` until `releasedAt` or `expiresAt`, whichever came first. */
export interface LaneLease {
  acquiredAt: string;
  /** The current expiry (renewals and a keep move it). */
  expiresAt: string;
  /** When the release cleared it; null while held, or when it expired unreleased. */
  releasedAt: string | null;
  fence: string;
  /**
   * The generation of the primary that issued the fence (its timeline): the lease's fencing token is
   * (generation, fence), compared in that order. Absent on lanes recorded before it was kept.
   */
  generation?: string;
}

export interface Lane {
  operationId: string;
  userId: string;
  instance: string;
  strategy: string;
  toIdentityId: string | null;
  requestedAt: string;
  answeredAt: string | null;
  status: number | null;
  problemType: string | null;
  phases: Phase[];
  lease: LaneLease | null;
}

/** The outcomes that mean the phase did what it set out to do (a provider call: a 2xx). */
const succeeded: ReadonlySet<PhaseOutcome> = new Set<PhaseOutcome>([
  "won",
  "took-over",
  "connected",
  "locked",
  "settled",
  "resumed",
  "saved",
  "released",
  "kept",
  "renewed",
]);

export type OutcomeKind = "running" | "ok" | "failed";

/** Whether a phase is still running, went well, or did not (refused, an error status, lost, crashed…). */
export function outcomeKind(phase: Phase): OutcomeKind {
  if (phase.outcome === null) return "running";
  if (succeeded.has(phase.outcome)) return "ok";
  const status = Number(phase.outcome);
  return Number.isInteger(status) && status >= 200 && status < 300 ? "ok" : "failed";
}

/** A request refused at acquisition (another operation held the lease): it ran nothing else. */
export const isRefused = (lane: Lane): boolean =>
  lane.lease === null && lane.phases.some((phase) => phase.name === "acquire" && phase.outcome === "refused");

const ms = (iso: string): number => Date.parse(iso);

/** When a lease stopped holding, in ms: its release or its expiry, whichever came first (held: its expiry). */
export function leaseEnd(lease: LaneLease): number {
  // Lanes recorded before leases had `releasedAt` lack it: never released, as far as they say.
  const releasedAt = lease.releasedAt ?? null;
  return releasedAt === null ? ms(lease.expiresAt) : Math.min(ms(releasedAt), ms(lease.expiresAt));
}

/** Released before its expiry (a release after it is too late to matter: the lease had expired first). */
export const releasedInTime = (lease: LaneLease): boolean => leaseEnd(lease) < ms(lease.expiresAt);

/** The lane's answer in a few characters: "running", "200", "409 operation-in-progress". */
export function answerWords(lane: Lane): string {
  if (lane.status === null) return "running";
  if (lane.status === 200) return "200";
  const problem = problemSlug(lane.problemType);
  return `${lane.status}${problem ? ` ${problem}` : ""}`;
}

/**
 * The lanes as they stood at `at` (ms): what had not happened yet is left out, what was still open is
 * open. For replaying a recorded run; the lease's expiry is the last one recorded (renewals are not kept).
 */
export function lanesAsOf(lanes: Lane[], at: number): Lane[] {
  const by = (iso: string | null): boolean => iso !== null && ms(iso) <= at;
  return lanes
    .filter((lane) => by(lane.requestedAt))
    .map((lane) => {
      const answered = by(lane.answeredAt);
      const lease = lane.lease && by(lane.lease.acquiredAt) ? lane.lease : null;
      return {
        ...lane,
        answeredAt: answered ? lane.answeredAt : null,
        status: answered ? lane.status : null,
        problemType: answered ? lane.problemType : null,
        lease: lease && { ...lease, releasedAt: by(lease.releasedAt) ? lease.releasedAt : null },
        phases: lane.phases
          .filter((phase) => by(phase.startedAt))
          .map((phase) =>
            by(phase.endedAt) ? phase : { ...phase, endedAt: null, outcome: null, detail: phase.detail },
          ),
      };
    });
}
