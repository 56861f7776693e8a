/**
 * The recorder: every switch request becomes a lane of phases (waiting, acquire, unlink, link, save,
 * renew, release, paused, …) with its lease: when it was acquired, its current expiry, and when the
 * release cleared it (if it did). The recorder keeps its lane in memory and hands each change to the
 * lane writer; times are the database's clock (db-clock.ts).
 */
import { randomUUID } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { preparedAs } from "../../db/prepared-statements";
import type { Database } from "../../db/schema";
import { problemFor } from "../core/problems";
import { param, statement, type LeaseEvent } from "@lease-lock-lab/lease";
import { shortId } from "../switch/events";
import type { JournalEntry } from "../switch/journal";
import { clockTime, databaseClock, dbNow } from "./db-clock";
import { instanceId } from "./instance";
import { instrumentDb } from "./instrument-db";
import type { Lane, Phase, PhaseName, PhaseOutcome } from "./lane";
import { laneWriter, type RecordedLane } from "./lane-writer";
import { laneChanged } from "./live-lanes";
import { publishLane } from "./stream";

/**
 * Ends a phase: its outcome and, if it has more to say, a new detail; `at` when it ended earlier than now;
 * `attempts` for a provider call that got no answer (how many requests it sent).
 */
export type EndPhase = (
  outcome: PhaseOutcome,
  detail?: string | null,
  more?: { at?: string; attempts?: number },
) => void;

/** What the guards and the lab's faults need to report their phases. */
export interface PhaseRecorder {
  start(name: PhaseName, detail?: string | null, accounts?: string[]): EndPhase;
}

export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export class OperationRecorder implements PhaseRecorder, RecordedLane {
  private readonly lane: Lane;
  /** Changes made so far: the writer knows which of them it has written. */
  version = 0;
  private openAcquire: EndPhase | null = null;
  private openRelease: EndPhase | null = null;
  /**
   * Shown only once the request may act for its user (its session is this user's): a lease checks that in the
   * acquiring statement, so a request refused there for its session never appears on anyone's timeline.
   */
  private admitted = false;
  private requestWritten = false;
  /** The switch's save released the lease in its own statement: the release is drawn right after the save. */
  private releasedWithSave = false;

  constructor(
    private readonly db: Kysely<Database>,
    lane: { userId: string; toIdentityId: string | null; strategy: string; operationId?: string },
  ) {
    this.lane = {
      operationId: lane.operationId ?? "",
      userId: lane.userId,
      instance: instanceId,
      strategy: lane.strategy,
      toIdentityId: lane.toIdentityId,
      requestedAt: dbNow(),
      answeredAt: null,
      status: null,
      problemType: null,
      phases: [],
      lease: null,
    };
    this.changed();
  }

  get operationId(): string {
    return this.lane.operationId;
  }

  /** The request may act for its user: from now on its changes are shown. */
  admit(): void {
    if (this.admitted) return;
    this.admitted = true;
    this.changed();
  }

  /** The operation's id, once the switch has one (an idempotent request learns it late); the first wins. */
  bind(operationId: string): void {
    if (this.lane.operationId) return;
    this.lane.operationId = operationId;
    this.changed();
  }

  setStrategy(strategy: string): void {
    this.lane.strategy = strategy;
    this.changed();
  }

  start(name: PhaseName, detail: string | null = null, accounts?: string[]): EndPhase {
    const phase: Phase = { name, startedAt: dbNow(), endedAt: null, outcome: null, detail, accounts };
    this.lane.phases.push(phase);
    this.changed();
    return (outcome, newDetail, more) => {
      if (phase.endedAt) return;
      phase.endedAt = more?.at ?? dbNow();
      phase.outcome = outcome;
      if (newDetail !== undefined) phase.detail = newDetail;
      if (more?.attempts !== undefined) phase.attempts = more.attempts;
      this.changed();
    };
  }

  /** A moment rather than a stretch of time: a renewal, a failed release retried in the background. */
  mark(name: PhaseName, outcome: PhaseOutcome, detail: string): void {
    this.start(name, detail)(outcome);
  }

  /** The lease's own account of itself (withLease's events), as phases and the lease band. */
  async leaseEvent(event: LeaseEvent): Promise<void> {
    const acquire = this.openAcquire;
    switch (event.kind) {
      case "acquired": {
        this.admit();
        const expiresAt = event.lease.expiresAt.toISOString();
        const { fence, generation } = event.lease;
        this.lane.lease = {
          acquiredAt: dbNow(),
          expiresAt,
          releasedAt: null,
          fence: String(fence),
          generation: String(generation),
        };
        acquire?.("won", `1 row: won, fence ${fence} (generation ${generation}), expires at ${clockTime(expiresAt)}`);
        return;
      }
      case "refused":
        this.admit();
        return this.refused(event.heldUntil, acquire ?? undefined);
      case "renewed":
      case "kept": {
        const expiresAt = event.lease.expiresAt.toISOString();
        if (this.lane.lease) this.lane.lease = { ...this.lane.lease, expiresAt };
        if (event.kind === "kept") this.openRelease?.("kept", `kept until ${clockTime(expiresAt)}: ${event.reason}`);
        else this.mark("renew", "renewed", `1 row: renewed, now expires at ${clockTime(expiresAt)}`);
        return;
      }
      case "lost":
        return this.mark("renew", "lost", `0 rows: the lease is no longer mine, stopped before ${event.beforeStep}`);
      case "released":
        // Released by the save's own statement: drawn, and dated, once the save has answered.
        if (this.saving()) return void (this.releasedWithSave = true);
        this.noteReleased();
        if (this.openRelease) this.openRelease("released", "1 row: released");
        else this.mark("release", "released", "1 row: released (background retry)");
        return;
      case "release-found-nothing": {
        const detail = "0 rows: the lease had already expired and was taken or cleared; nothing released";
        if (this.openRelease) this.openRelease("found-nothing", detail);
        else this.mark("release", "found-nothing", `${detail} (background retry)`);
        return;
      }
      case "keep-failed":
        this.openRelease?.("failed", `keeping it failed (${errorText(event.error)}): left as it is, its TTL frees it`);
        return;
      case "release-failed": {
        const detail = `attempt ${event.attempt} of ${event.attempts} failed: ${errorText(event.error)}`;
        if (this.openRelease) this.openRelease("failed", detail);
        else this.mark("release", "failed", detail);
        this.openRelease = null;
        return;
      }
    }
  }

  acquiring(): void {
    this.openAcquire = this.start("acquire");
  }

  /** The body of the guarded section ended: the lease is released (or kept) next, unless its save did. */
  releasing(): void {
    if (!this.releasedWithSave) return void (this.openRelease = this.start("release"));
    this.mark("release", "released", "1 row: released by the save's own statement");
    this.noteReleased(this.lane.phases.at(-1)!.startedAt);
  }

  private noteReleased(at = dbNow()): void {
    if (this.lane.lease) this.lane.lease = { ...this.lane.lease, releasedAt: at };
  }

  private saving(): boolean {
    return this.lane.phases.some((phase) => phase.name === "save" && phase.endedAt === null);
  }

  /** A lease that expired unreleased was taken over: the acquisition says so. */
  tookOver(leftovers: JournalEntry[]): void {
    const taken = leftovers.filter((entry) => entry.endedWith === null);
    const acquire = this.lane.phases.find((phase) => phase.name === "acquire");
    if (taken.length === 0 || !acquire) return;
    acquire.outcome = "took-over";
    acquire.detail = `${acquire.detail}; took over the expired lease of operation ${taken
      .map((entry) => shortId(entry.operationId))
      .join(", ")}`;
    this.changed();
  }

  /**
   * The request's answer; whatever is still open ends with it. Waits until the lane is written, as whoever
   * reads the timeline after the answer expects to find it. A request refused for its session (401, 403) was
   * no switch of this user's: it has no lane.
   */
  async answer(status: number, problemType: string | null): Promise<void> {
    if (status === 401 || status === 403) return;
    this.bind(randomUUID());
    const answeredAt = dbNow();
    for (const phase of this.lane.phases.filter((each) => each.endedAt === null)) {
      phase.endedAt = answeredAt;
      phase.outcome ??= "unfinished";
    }
    Object.assign(this.lane, { answeredAt, status, problemType });
    this.admit();
    this.changed();
    await laneWriter.written(this);
  }

  private async refused(heldUntil: Date | null, acquire: EndPhase | undefined): Promise<void> {
    // The 0-row answer came now; the statement itself said the lease was held until `heldUntil`, so it ran
    // before then: a stamp past it is this process's lateness (a busy event loop), not the refusal's, and is
    // drawn at that bound.
    const now = dbNow();
    const refusedAt = heldUntil && Date.parse(now) > heldUntil.getTime() ? heldUntil.toISOString() : now;
    const until = heldUntil ? ` until ${clockTime(heldUntil.toISOString())}` : "";
    const holder = await recordRefusal
      .execute(this.db, {
        userId: this.lane.userId,
        operationId: this.lane.operationId,
        heldUntil,
        head: `Operation ${shortId(this.lane.operationId)} refused at ${clockTime(refusedAt)}: `,
        tail: ` holds the lease${until}.`,
      })
      .then(({ rows }) => rows[0]?.holder ?? null)
      .catch((error: unknown) => {
        console.error("[timeline] could not record the refusal:", error);
        return null;
      });
    const by = holder ? `operation ${shortId(holder)}` : "another operation";
    acquire?.("refused", `0 rows: held by ${by}${until}`, { at: refusedAt });
  }

  /**
   * A change: shown on this instance's live stream at once. A lane without an operation id yet is not shown:
   * its row needs one. Its row is written at the answer (`answer`); without a lease, also as the request
   * starts; and again for what comes after the answer (a release retried in the background).
   */
  private changed(): void {
    if (!this.lane.operationId || !this.admitted) return;
    this.version++;
    laneChanged(this.lane, this.version);
    publishLane(this.lane, this.version);
    const starts = this.lane.strategy !== "lease" && !this.requestWritten;
    if (starts || this.lane.answeredAt !== null) laneWriter.request(this);
    this.requestWritten ||= starts;
  }

  /** The lane as it is now (the same object, which goes on changing): serialise it before waiting. */
  current(): Lane {
    return this.lane;
  }
}

/**
 * A refusal's event, with the holder's name looked up in the same statement (one round trip on the
 * instruments' pool, compiled once, where a read then an insert built at each refusal were two: 29 of 30
 * clicks of a storm are refusals). The holder is named only while the lease still has the expiry the refusal
 * reported (to the millisecond a Date keeps): a holder that came later, or a renewal, make it "another
 * operation" rather than a name the refusal never saw. `left(…, 8)` is `shortId`'s. A statement that fails
 * (logged) leaves the event unwritten and the lane's acquisition saying "another operation". The event is
 * written before the lane's phase ends (it needs the statement's answer): either may reach a page first.
 */
const recordRefusal = statement<
  Database,
  { holder: string | null },
  { userId: string; operationId: string; heldUntil: Date | null; head: string; tail: string }
>(
  () => sql`${preparedAs("lab_refusal_record")}
    WITH holder AS (
      SELECT j.operation_id FROM switch_journal j
        JOIN users u ON u.id = j.user_id AND j.fence = u.identity_action_fence
       WHERE u.id = ${param("userId")}
         AND date_trunc('milliseconds', u.identity_action_locked_until) = ${param("heldUntil")}::timestamptz
       ORDER BY j.id DESC LIMIT 1)
    INSERT INTO operation_events (user_id, operation_id, kind, message)
    SELECT ${param("userId")}::text, ${param("operationId")}::uuid, 'refused',
           ${param("head")}::text
             || coalesce('operation ' || left((SELECT operation_id::text FROM holder), 8), 'another operation')
             || ${param("tail")}::text
    RETURNING (SELECT operation_id::text FROM holder) AS holder`,
);

/** A recorder for a new request, once the database's clock is known. */
export async function startRecording(lane: {
  userId: string;
  toIdentityId: string | null;
  strategy: string;
  operationId?: string;
}): Promise<OperationRecorder> {
  const db = instrumentDb();
  await databaseClock(db);
  return new OperationRecorder(db, lane);
}

/** Runs a request's work and records its answer on its lane: 200, or what the route answers for its error. */
export async function answering<T>(recorder: OperationRecorder, work: () => Promise<T>): Promise<T> {
  try {
    const result = await work();
    await recorder.answer(200, null);
    return result;
  } catch (error) {
    const { status, problemType } = answerOf(error);
    await recorder.answer(status, problemType);
    throw error;
  }
}

/** Records a request's answer: a result (200) or the problem it failed with. */
export function answerOf(error: unknown): { status: number; problemType: string | null } {
  const problem = problemFor(error);
  if (problem) return { status: problem.status, problemType: problem.type };
  return { status: 500, problemType: null };
}
