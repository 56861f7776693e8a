/**
 * The timeline: every switch request becomes a lane of phases (waiting, acquire, unlink, link, save,
 * renew, release, paused, …) with its lease: when it was acquired, its current expiry, and when the
 * release cleared it (if it did). A recorder keeps its lane in memory; the lanes that changed are written
 * whole, together, through the lab's own pool, so recording never waits for the app's pool nor slows the
 * operation down; each lane written notifies every instance (a trigger).
 *
 * Times are the database's clock: this process measures its offset to `clock_timestamp()` and stamps
 * phases with it, so lanes written by two instances line up.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { sql, type Kysely } from "kysely";
import { z } from "zod";
import type { Database } from "../../db/schema";
import { isDatabaseUnavailable } from "../core/db-errors";
import { DatabaseUnavailable, Problem } from "../core/problems";
import type { LeaseEvent } from "../lease";
import { WorkCrashed } from "../lease/testing";
import { ProviderCallError, type IdentityProviderClient } from "../provider/client";
import { shortId } from "../switch/events";
import type { Guard } from "../switch/guard";
import type { JournalEntry } from "../switch/journal";
import { instrumentDb } from "./instrument-db";

export type PhaseName =
  "waiting" | "acquire" | "recover" | "unlink" | "link" | "save" | "renew" | "release" | "paused" | "crashed";

export interface Phase {
  name: PhaseName;
  startedAt: string;
  endedAt: string | null;
  outcome: string | null;
  detail: string | null;
  /** The provider accounts a provider phase touched: where two operations can collide. */
  accounts?: string[];
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

/** A lane's lease: held from `acquiredAt` until `releasedAt` or `expiresAt`, whichever came first. */
export interface LaneLease {
  acquiredAt: string;
  /** The current expiry (renewals and a keep move it). */
  expiresAt: string;
  /** When the release cleared it; null while held, or when it expired unreleased. */
  releasedAt: string | null;
  fence: string;
}

/** This app process, as lanes and pool messages name it (`--instances N` numbers them: LAB_INSTANCE). */
export const instanceId =
  process.env.APP_INSTANCE ?? process.env.LAB_INSTANCE ?? `${hostname()}:${process.env.PORT ?? process.pid}`;

/** Ends a phase: its outcome (a status, a word) and, if it has more to say, a new detail. */
export type EndPhase = (outcome: string | null, detail?: string | null) => void;

/** What the guards and the lab's faults need to report their phases. */
export interface PhaseRecorder {
  start(name: PhaseName, detail?: string | null, accounts?: string[]): EndPhase;
}

let clockOffsetMs = 0;
let clockMeasured: Promise<void> | undefined;

/** The database's time now, from this process's clock and its measured offset. */
const dbNow = (): string => new Date(Date.now() + clockOffsetMs).toISOString();

async function measureClock(db: Kysely<Database>): Promise<void> {
  const before = Date.now();
  const { rows } = await sql<{ now: Date }>`SELECT clock_timestamp() AS now`.execute(db);
  const after = Date.now();
  clockOffsetMs = rows[0]!.now.getTime() - (before + after) / 2;
}

/** Measures the offset once, then every minute; until then (or without a database) it is taken as 0. */
function databaseClock(db: Kysely<Database>): Promise<void> {
  clockMeasured ??= measureClock(db)
    .then(() => void setInterval(() => void measureClock(db).catch(() => undefined), 60_000).unref())
    .catch((error: unknown) => console.error("[timeline] could not read the database's clock:", error));
  return clockMeasured;
}

const clock = (iso: string): string => iso.slice(11, 23);

export class OperationRecorder implements PhaseRecorder {
  private readonly lane: Lane;
  /** Changes made, and changes whose write has ended, well or not (the lane writer's bookkeeping). */
  version = 0;
  attemptedVersion = 0;
  readonly waiters: { version: number; resolve: () => void }[] = [];
  failureLogged = false;
  private openAcquire: EndPhase | null = null;
  private openRelease: EndPhase | null = null;

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
    return (outcome, newDetail) => {
      if (phase.endedAt) return;
      phase.endedAt = dbNow();
      phase.outcome = outcome;
      if (newDetail !== undefined) phase.detail = newDetail;
      this.changed();
    };
  }

  /** A moment rather than a stretch of time: a renewal, a failed release retried in the background. */
  mark(name: PhaseName, outcome: string, detail: string): void {
    this.start(name, detail)(outcome);
  }

  /** The lease's own account of itself (withLease's events), as phases and the lease band. */
  async leaseEvent(event: LeaseEvent): Promise<void> {
    const acquire = this.openAcquire;
    switch (event.kind) {
      case "acquired": {
        const expiresAt = event.lease.expiresAt.toISOString();
        this.lane.lease = { acquiredAt: dbNow(), expiresAt, releasedAt: null, fence: String(event.lease.fence) };
        acquire?.("won", `1 row: won, fence ${event.lease.fence}, expires at ${clock(expiresAt)}`);
        return;
      }
      case "refused":
        return this.refused(event.heldUntil, acquire ?? undefined);
      case "renewed":
      case "kept": {
        const expiresAt = event.lease.expiresAt.toISOString();
        if (this.lane.lease) this.lane.lease = { ...this.lane.lease, expiresAt };
        if (event.kind === "kept") this.openRelease?.("kept", `kept until ${clock(expiresAt)}: ${event.reason}`);
        else this.mark("renew", "renewed", `1 row: renewed, now expires at ${clock(expiresAt)}`);
        return;
      }
      case "lost":
        return this.mark("renew", "lost", `0 rows: the lease is no longer mine, stopped before ${event.beforeStep}`);
      case "released":
        if (this.lane.lease) this.lane.lease = { ...this.lane.lease, releasedAt: dbNow() };
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

  /** The body of the guarded section ended: the lease is released (or kept) next. */
  releasing(): void {
    this.openRelease = this.start("release");
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

  /** The request's answer; whatever is still open ends with it. Waits until the lane is written. */
  async answer(status: number, problemType: string | null): Promise<void> {
    this.bind(randomUUID());
    const answeredAt = dbNow();
    for (const phase of this.lane.phases.filter((each) => each.endedAt === null)) {
      phase.endedAt = answeredAt;
      phase.outcome ??= "unfinished";
    }
    Object.assign(this.lane, { answeredAt, status, problemType });
    this.changed();
    await laneWriter.written(this);
  }

  private async refused(heldUntil: Date | null, acquire: EndPhase | undefined): Promise<void> {
    const holder = await this.db
      .selectFrom("switch_journal")
      .select("operation_id")
      .where("user_id", "=", this.lane.userId)
      .orderBy("id", "desc")
      .executeTakeFirst()
      .catch(() => undefined);
    const by = holder ? `operation ${shortId(holder.operation_id)}` : "another operation";
    const until = heldUntil ? ` until ${clock(heldUntil.toISOString())}` : "";
    acquire?.("refused", `0 rows: held by ${by}${until}`);
    const message =
      `Operation ${shortId(this.lane.operationId)} refused at ${clock(dbNow())}: ` + `${by} holds the lease${until}.`;
    await this.db
      .insertInto("operation_events")
      .values({ user_id: this.lane.userId, operation_id: this.lane.operationId, kind: "refused", message })
      .execute()
      .catch((error: unknown) => console.error("[timeline] could not record the refusal:", error));
  }

  private changed(): void {
    if (!this.lane.operationId) return;
    this.version++;
    laneWriter.mark(this);
  }

  /** The lane as a row of `operation_lanes`. */
  row() {
    const lane = this.lane;
    return {
      operation_id: lane.operationId,
      user_id: lane.userId,
      instance: lane.instance,
      strategy: lane.strategy,
      to_identity_id: lane.toIdentityId,
      requested_at: new Date(lane.requestedAt),
      answered_at: lane.answeredAt ? new Date(lane.answeredAt) : null,
      status: lane.status,
      problem_type: lane.problemType,
      lease: lane.lease ? JSON.stringify(lane.lease) : null,
      phases: JSON.stringify(lane.phases),
    };
  }
}

/** How long changes gather before the lanes that changed are written: the live view's frame, 40 a second. */
const laneWriteEveryMs = 25;

/**
 * Writes the lanes that changed, all of them in one statement, at most one statement in flight and one
 * per `laneWriteEveryMs` per process: a switch's ten phase changes are three or four writes, 64 switches
 * at once a few statements per step. A request's answer does not wait for the window: its lane is written
 * at once.
 */
class LaneWriter {
  private readonly dirty = new Set<OperationRecorder>();
  private writing = false;
  private due: ReturnType<typeof setTimeout> | null = null;

  mark(recorder: OperationRecorder): void {
    this.dirty.add(recorder);
    this.writeSoon();
  }

  /** Until the write of the recorder's latest change has ended (a failed write is logged, not retried). */
  written(recorder: OperationRecorder): Promise<void> {
    if (recorder.attemptedVersion >= recorder.version) return Promise.resolve();
    const done = new Promise<void>((resolve) => recorder.waiters.push({ version: recorder.version, resolve }));
    this.writeNow();
    return done;
  }

  private writeSoon(): void {
    this.due ??= setTimeout(() => this.writeNow(), laneWriteEveryMs);
    this.due.unref?.();
  }

  private writeNow(): void {
    if (this.due) clearTimeout(this.due);
    this.due = null;
    if (!this.writing && this.dirty.size > 0) void this.writeOnce();
  }

  private async writeOnce(): Promise<void> {
    this.writing = true;
    const batch = [...this.dirty].map((recorder) => ({ recorder, version: recorder.version }));
    this.dirty.clear();
    // One row per operation (an upsert may not touch a row twice): the last recorder's, if two shared one.
    const rows = new Map(batch.map(({ recorder }) => [recorder.operationId, recorder.row()]));
    try {
      await this.write([...rows.values()]);
    } catch (error) {
      for (const { recorder } of batch) {
        if (!recorder.failureLogged)
          console.error("[timeline] could not record operation", recorder.operationId, error);
        recorder.failureLogged = true;
      }
    }
    for (const { recorder, version } of batch) {
      recorder.attemptedVersion = Math.max(recorder.attemptedVersion, version);
      // Waiters wait for the version of their time: versions only grow, so the due ones come first.
      while (recorder.waiters[0] && recorder.waiters[0].version <= recorder.attemptedVersion)
        recorder.waiters.shift()!.resolve();
    }
    this.writing = false;
    // Changes made meanwhile: at once if an answer waits for one of them, else in the next window.
    if ([...this.dirty].some((recorder) => recorder.waiters.length > 0)) this.writeNow();
    else if (this.dirty.size > 0) this.writeSoon();
  }

  private async write(rows: ReturnType<OperationRecorder["row"]>[]): Promise<void> {
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
}

const laneWriter = new LaneWriter();

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

/** Records a request's answer: a result (200) or the problem it failed with. */
export function answerOf(error: unknown): { status: number; problemType: string | null } {
  // The same answer the route gives (lib/web/http.ts `respond`).
  const problem = isDatabaseUnavailable(error) ? new DatabaseUnavailable() : error;
  if (problem instanceof Problem) return { status: problem.status, problemType: problem.type };
  return { status: 500, problemType: null };
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** A provider call's failure in the provider log's words: its status, or what happened instead. */
function callOutcome(error: unknown): string {
  if (!(error instanceof ProviderCallError)) return "failed";
  if (error.errorCode === "fenced_token") return "fenced";
  if (error.kind === "deadline") return "timeout";
  if (error.kind === "network") return "network-error";
  return String(error.status);
}

async function timed<T>(
  recorder: PhaseRecorder,
  name: PhaseName,
  detail: string,
  accounts: string[],
  success: string,
  work: () => Promise<T>,
): Promise<T> {
  const end = recorder.start(name, detail, accounts);
  try {
    const result = await work();
    end(success);
    return result;
  } catch (error) {
    end(callOutcome(error), `${detail}: ${errorText(error)}`);
    throw error;
  }
}

/** The provider client, each call a phase: `unlink`, `link`, and the reads of a recovery (`recover`). */
export function recordingProvider(provider: IdentityProviderClient, recorder: PhaseRecorder): IdentityProviderClient {
  return {
    // A rename is not a switch: it has no lane of its own.
    renameAccount: provider.renameAccount,
    getAccount: (accountId, context) =>
      timed(recorder, "recover", `read ${accountId}`, [accountId], "200", () =>
        provider.getAccount(accountId, context),
      ),
    unlinkIdentity: (primaryId, identityId, context) =>
      timed(recorder, "unlink", `unlink ${identityId} from ${primaryId}`, [primaryId, identityId], "200", () =>
        provider.unlinkIdentity(primaryId, identityId, context),
      ),
    linkAccount: (primaryId, secondaryId, context) =>
      timed(recorder, "link", `link ${secondaryId} under ${primaryId}`, [primaryId, secondaryId], "201", () =>
        provider.linkAccount(primaryId, secondaryId, context),
      ),
  };
}

/**
 * A guard whose run is recorded: the lane learns the operation's id, the save is a phase, and for the
 * lease (`leased`) the acquisition, a take-over and the release are phases too. A crash (the lab's fault)
 * is a `crashed` phase, and no release follows it: a dead process releases nothing.
 */
export function recordedGuard(guard: Guard, recorder: OperationRecorder, leased: boolean): Guard {
  return {
    run: (request, body) => {
      recorder.bind(request.operationId);
      if (leased) recorder.acquiring();
      return guard.run(request, async (section) => {
        recorder.tookOver(section.leftovers);
        let crashed = false;
        try {
          return await body({
            ...section,
            savePrimary: async (primaryIdentityId, options) => {
              const end = recorder.start("save", `primary ${primaryIdentityId}`);
              try {
                await section.savePrimary(primaryIdentityId, options);
                end("saved");
              } catch (error) {
                end("failed", errorText(error));
                throw error;
              }
            },
          });
        } catch (error) {
          if (error instanceof WorkCrashed) {
            crashed = true;
            recorder.mark("crashed", "crashed", error.message);
          }
          throw error;
        } finally {
          if (leased && !crashed) recorder.releasing();
        }
      });
    },
  };
}

/** How far back a timeline reaches: whole milliseconds as a query string, up to a day; 60 s by default. */
export const sinceMsSchema = z
  .string()
  .regex(/^\d{1,9}$/, "must be a whole number of milliseconds")
  .transform(Number)
  .pipe(z.number().int().min(1).max(86_400_000))
  .default(60_000);

export interface TimelineQuery {
  userId?: string;
  sinceMs: number;
}

/** The lanes of the last `sinceMs` (of one user, or all), oldest first, with the database's time now. */
export async function readTimeline(
  db: Kysely<Database>,
  { userId, sinceMs }: TimelineQuery,
): Promise<{ now: string; operations: Lane[] }> {
  const { rows } = await sql<{ now: string; operations: Lane[] }>`
    SELECT lab_iso(clock_timestamp()) AS now,
           coalesce(jsonb_agg(lab_lane_json(l) ORDER BY l.requested_at, l.operation_id), '[]') AS operations
      FROM operation_lanes l
     WHERE l.requested_at > clock_timestamp() - make_interval(secs => ${sinceMs / 1000})
       AND (${userId ?? null}::text IS NULL OR l.user_id = ${userId ?? null})`.execute(db);
  return rows[0]!;
}

export async function readLane(db: Kysely<Database>, operationId: string): Promise<Lane | null> {
  const { rows } = await sql<{ lane: Lane }>`
    SELECT lab_lane_json(l) AS lane FROM operation_lanes l WHERE l.operation_id = ${operationId}::uuid`.execute(db);
  return rows[0]?.lane ?? null;
}
