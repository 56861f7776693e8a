/**
 * Writes the lanes that changed to `operation_lanes`, all of them in one statement, through the lab's own
 * pool: recording never waits for the app's pool nor slows the operation down. Each row written notifies
 * every instance (a trigger), which is what feeds the stream.
 *
 * The writer is a small state machine, one per process:
 *
 *   idle ──change──▶ gathering ──window over, or an answer waits──▶ writing ──done──▶ idle
 *                        ▲                                             │
 *                        └──────── changes were made meanwhile ◀───────┘ (or straight to writing, if an
 *                                                                          answer waits for one of them)
 *
 * Why: a switch makes ten phase changes in a second and 64 switches may run at once. Gathering for a
 * frame turns them into a few statements; at most one statement in flight keeps the rows' order (a later
 * version never overtaken by an earlier one). A request's answer does not wait for the window.
 *
 * A write that fails (the database is away: a promotion) is made again, whole, once it is back: the gathering
 * waits longer each time (250 ms, doubling up to 2 s) while writes fail. A lane whose last version was never
 * written would stay "running" on the timeline, and keep the audit from ever settling. The answers that wait
 * for a write are let go when it fails: an answer never waits for the database to come back.
 */
import type { Insertable } from "kysely";
import type { OperationLanesTable } from "../../db/schema";
import { instrumentDb } from "./instrument-db";

/** A lane as a row of `operation_lanes`, as it is written. */
export type LaneRow = Insertable<OperationLanesTable>;

/** What the writer needs of a recorder: its id, how many changes it has made, and its row as of now. */
export interface RecordedLane {
  readonly operationId: string;
  readonly version: number;
  row(): LaneRow;
}

/** How long changes gather before the lanes that changed are written: the live view's frame, 40 a second. */
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
  private readonly dirty = new Set<RecordedLane>();
  private readonly progress = new WeakMap<RecordedLane, Progress>();
  /** 0 while writes succeed; else how long to wait before the next attempt. */
  private retryDelayMs = 0;

  /** The lane changed: it is written in the next window. */
  changed(lane: RecordedLane): void {
    this.dirty.add(lane);
    if (this.state.kind === "idle") this.gather();
    // gathering: the window already set covers it; writing: it stays dirty for the next statement.
  }

  /** Until the write of the lane's latest change has ended (when it failed, the lane is written again later). */
  written(lane: RecordedLane): Promise<void> {
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
    if (this.dirty.size === 0) {
      this.state = { kind: "idle" };
      return;
    }
    const batch = [...this.dirty].map((lane) => ({ lane, version: lane.version }));
    this.dirty.clear();
    this.state = { kind: "writing" };
    // One row per operation (an upsert may not touch a row twice): the last recorder's, if two shared one.
    const rows = new Map(batch.map(({ lane }) => [lane.operationId, lane.row()]));
    try {
      await upsertLanes([...rows.values()]);
      this.retryDelayMs = 0;
      for (const { lane } of batch) this.progressOf(lane).failures = 0;
    } catch (error) {
      for (const { lane } of batch) {
        const progress = this.progressOf(lane);
        if (!progress.failureLogged) console.error("[timeline] could not record operation", lane.operationId, error);
        progress.failureLogged = true;
        // Written again, as it is then, with the next batch; unless it has failed for a minute.
        if (++progress.failures < mostFailures) this.dirty.add(lane);
        else console.error("[timeline] gave up recording operation", lane.operationId);
      }
      this.retryDelayMs = Math.min(retryAfterMs.most, Math.max(retryAfterMs.first, this.retryDelayMs * 2));
    }
    for (const { lane, version } of batch) {
      const progress = this.progressOf(lane);
      progress.attempted = Math.max(progress.attempted, version);
      // Waiters wait for the version of their time: versions only grow, so the due ones come first.
      while (progress.waiters[0] && progress.waiters[0].version <= progress.attempted)
        progress.waiters.shift()!.resolve();
    }
    this.state = { kind: "idle" };
    // Changes made meanwhile: at once if an answer waits for one of them (unless writes are failing), else in
    // the next window.
    const waited = [...this.dirty].some((lane) => this.progressOf(lane).waiters.length > 0);
    if (waited && this.retryDelayMs === 0) void this.write();
    else if (this.dirty.size > 0) this.gather();
  }

  private progressOf(lane: RecordedLane): Progress {
    let progress = this.progress.get(lane);
    if (!progress)
      this.progress.set(lane, (progress = { attempted: 0, waiters: [], failureLogged: false, failures: 0 }));
    return progress;
  }
}

async function upsertLanes(rows: LaneRow[]): Promise<void> {
  await instrumentDb()
    .insertInto("operation_lanes")
    .values(rows)
    .onConflict((conflict) =>
      conflict.column("operation_id").doUpdateSet((eb) => ({
        user_id: eb.ref("excluded.user_id"),
        instance: eb.ref("excluded.instance"),
        strategy: eb.ref("excluded.strategy"),
        to_identity_id: eb.ref("excluded.to_identity_id"),
        requested_at: eb.ref("excluded.requested_at"),
        answered_at: eb.ref("excluded.answered_at"),
        status: eb.ref("excluded.status"),
        problem_type: eb.ref("excluded.problem_type"),
        lease: eb.ref("excluded.lease"),
        phases: eb.ref("excluded.phases"),
      })),
    )
    .execute();
}

export const laneWriter = new LaneWriter();
