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

/** How long due lanes gather before they are written, when no answer waits: the live view's frame. */
const laneWriteEveryMs = 25;

type WriterState = { kind: "idle" } | { kind: "gathering"; due: ReturnType<typeof setTimeout> } | { kind: "writing" };

/** Per lane: the last version whose write has ended (well or not), and the answers waiting for one. */
interface Progress {
  attempted: number;
  waiters: { version: number; resolve: () => void }[];
  failureLogged: boolean;
}

class LaneWriter {
  private state: WriterState = { kind: "idle" };
  private readonly due = new Set<RecordedLane>();
  private readonly progress = new WeakMap<RecordedLane, Progress>();

  /** The lane's row is due (its request started, under a strategy the audit reads lanes for): next window. */
  request(lane: RecordedLane): void {
    this.due.add(lane);
    if (this.state.kind === "idle") this.gather();
    // gathering: the window already set covers it; writing: it stays due for the next statement.
  }

  /** Writes the lane as it is now, and resolves once that write has ended (a failed write is logged). */
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
    const due = setTimeout(() => void this.write(), laneWriteEveryMs);
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
    const rows = new Map(batch.map(({ lane }) => [lane.operationId, lane.row()]));
    try {
      await upsertLanes([...rows.values()]);
    } catch (error) {
      for (const { lane } of batch) {
        const progress = this.progressOf(lane);
        if (!progress.failureLogged) console.error("[timeline] could not record operation", lane.operationId, error);
        progress.failureLogged = true;
      }
    }
    for (const { lane, version } of batch) this.attempted(lane, version);
    this.state = { kind: "idle" };
    // Lanes due meanwhile: at once if an answer waits for one of them, else in the next window.
    if ([...this.due].some((lane) => this.progressOf(lane).waiters.length > 0)) void this.write();
    else if (this.due.size > 0) this.gather();
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
    if (!progress) this.progress.set(lane, (progress = { attempted: 0, waiters: [], failureLogged: false }));
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
