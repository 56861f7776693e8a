/**
 * Writes lanes to `operation_lanes` through the lab's own pool: recording never waits for the app's pool.
 * A lane is written when its request is answered, once; a request whose strategy has neither lease nor
 * journal to bound it is written when it starts as well, since the audit reads its unanswered requests from
 * the table. Between the two, its changes reach this instance's live stream from memory (lib/lab/stream.ts);
 * each row written notifies every instance (a trigger), which is how the others hear of it.
 *
 * The writer is a small state machine, one per process:
 *
 *   idle ──lane due──▶ gathering ──window over, or an answer waits──▶ writing ──done──▶ idle
 *                         ▲                                             │
 *                         └──────── lanes were due meanwhile ◀──────────┘ (or straight to writing, if an
 *                                                                          answer waits for one of them)
 *
 * Why: 64 switches may answer at once. Gathering for a frame turns their rows into a few statements; at most
 * one statement in flight keeps the rows' order (a later version never overtaken by an earlier one).
 *
 * A write that fails (the database is away: a promotion) is made again, whole, once it is back: the gathering
 * waits longer each time (250 ms, doubling up to 2 s) while writes fail. A lane whose last version was never
 * written would stay "running" on the timeline, and keep the audit from ever settling. The answers that wait
 * for a write are let go when it fails: an answer never waits for the database to come back.
 */
import { sql } from "kysely";
import { preparedAs } from "../../db/prepared-statements";
import type { Database } from "../../db/schema";
import { param, statement } from "@lease-lock-lab/lease";
import { instrumentDb } from "./instrument-db";
import type { Lane } from "./lane";

/** What the writer needs of a recorder: its id, how many changes it has made, and its lane as of now. */
export interface RecordedLane {
  readonly operationId: string;
  readonly version: number;
  current(): Lane;
}

/** How long due lanes gather before they are written, when no answer waits: the live view's frame. */
const laneWriteEveryMs = 25;
/** After a failed write, the first wait before the next, and the longest; a lane is given up after a minute. */
const retryAfterMs = { first: 250, most: 2_000 };
const mostFailures = 30;

type WriterState = { kind: "idle" } | { kind: "gathering"; due: ReturnType<typeof setTimeout> } | { kind: "writing" };

/** Per lane: the last version whose write has ended (well or not), and the answers waiting for one. */
interface Progress {
  attempted: number;
  waiters: { version: number; resolve: () => void }[];
  failureLogged: boolean;
  /** Failed writes since its last one that succeeded. */
  failures: number;
}

class LaneWriter {
  private state: WriterState = { kind: "idle" };
  private readonly due = new Set<RecordedLane>();
  private readonly progress = new WeakMap<RecordedLane, Progress>();
  /** 0 while writes succeed; else how long to wait before the next attempt. */
  private retryDelayMs = 0;

  /** The lane's row is due (its request started, under a strategy the audit reads lanes for): next window. */
  request(lane: RecordedLane): void {
    this.due.add(lane);
    if (this.state.kind === "idle") this.gather();
    // gathering: the window already set covers it; writing: it stays due for the next statement.
  }

  /**
   * Writes the lane as it is now, and resolves once that write has ended (a failed write is logged, and the
   * lane written again later).
   */
  written(lane: RecordedLane): Promise<void> {
    this.due.add(lane);
    const progress = this.progressOf(lane);
    if (progress.attempted >= lane.version) return Promise.resolve();
    const done = new Promise<void>((resolve) => progress.waiters.push({ version: lane.version, resolve }));
    // An answer waits: no window. While writing, the end of that statement starts the next at once.
    if (this.state.kind !== "writing") void this.write();
    return done;
  }

  private gather(): void {
    const due = setTimeout(() => void this.write(), this.retryDelayMs || laneWriteEveryMs);
    due.unref?.();
    this.state = { kind: "gathering", due };
  }

  private async write(): Promise<void> {
    if (this.state.kind === "gathering") clearTimeout(this.state.due);
    if (this.due.size === 0) {
      this.state = { kind: "idle" };
      return;
    }
    const batch = [...this.due].map((lane) => ({ lane, version: lane.version }));
    this.due.clear();
    this.state = { kind: "writing" };
    // One row per operation (an upsert may not touch a row twice): the last recorder's, if two shared one.
    // Serialised now: the recorders go on changing their lanes while the statement is in flight.
    const lanes = JSON.stringify([...new Map(batch.map(({ lane }) => [lane.operationId, lane.current()])).values()]);
    try {
      await writeLanes.execute(instrumentDb(), { lanes });
      this.retryDelayMs = 0;
      for (const { lane } of batch) this.progressOf(lane).failures = 0;
    } catch (error) {
      this.failed(batch, error);
    }
    for (const { lane, version } of batch) this.attempted(lane, version);
    this.state = { kind: "idle" };
    // Lanes due meanwhile: at once if an answer waits for one of them (unless writes are failing), else in the
    // next window.
    const waited = [...this.due].some((lane) => this.progressOf(lane).waiters.length > 0);
    if (waited && this.retryDelayMs === 0) void this.write();
    else if (this.due.size > 0) this.gather();
  }

  /** Each lane is written again, as it is then, with the next batch; unless it has failed for a minute. */
  private failed(batch: { lane: RecordedLane }[], error: unknown): void {
    for (const { lane } of batch) {
      const progress = this.progressOf(lane);
      if (!progress.failureLogged) console.error("[timeline] could not record operation", lane.operationId, error);
      progress.failureLogged = true;
      if (++progress.failures < mostFailures) this.due.add(lane);
      else console.error("[timeline] gave up recording operation", lane.operationId);
    }
    this.retryDelayMs = Math.min(retryAfterMs.most, Math.max(retryAfterMs.first, this.retryDelayMs * 2));
  }

  /** Waiters wait for the version of their time: versions only grow, so the due ones come first. */
  private attempted(lane: RecordedLane, version: number): void {
    const progress = this.progressOf(lane);
    progress.attempted = Math.max(progress.attempted, version);
    while (progress.waiters[0] && progress.waiters[0].version <= progress.attempted)
      progress.waiters.shift()!.resolve();
  }

  private progressOf(lane: RecordedLane): Progress {
    let progress = this.progress.get(lane);
    if (!progress)
      this.progress.set(lane, (progress = { attempted: 0, waiters: [], failureLogged: false, failures: 0 }));
    return progress;
  }
}

/**
 * Every lane of a batch in one statement of one text, whatever the batch's size: the lanes as one JSON array,
 * in the contract's shape (lib/lab/lane.ts), each its row. Compiled once and named, where an upsert built row
 * by row (11 parameters a lane) was built, compiled and planned again for every batch: the lab on's Kysely
 * took 0.22 ms a switch at K = 64, the lab off's 0.08 (bench:profile, 2026-12-06).
 */
const writeLanes = statement<Database, never, { lanes: string }>(
  () => sql`${preparedAs("lab_lanes_write")}
    INSERT INTO operation_lanes (operation_id, user_id, instance, strategy, to_identity_id, requested_at,
                                 answered_at, status, problem_type, lease, phases)
    SELECT "operationId", "userId", instance, strategy, "toIdentityId", "requestedAt",
           "answeredAt", status, "problemType", lease, phases
      FROM jsonb_to_recordset(${param("lanes")}::jsonb) AS lane (
             "operationId" uuid, "userId" text, instance text, strategy text, "toIdentityId" text,
             "requestedAt" timestamptz, "answeredAt" timestamptz, status integer, "problemType" text,
             lease jsonb, phases jsonb)
    ON CONFLICT (operation_id) DO UPDATE SET
      user_id = excluded.user_id, instance = excluded.instance, strategy = excluded.strategy,
      to_identity_id = excluded.to_identity_id, requested_at = excluded.requested_at,
      answered_at = excluded.answered_at, status = excluded.status, problem_type = excluded.problem_type,
      lease = excluded.lease, phases = excluded.phases`,
);

export const laneWriter = new LaneWriter();
