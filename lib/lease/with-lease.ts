/**
 * Runs a piece of work under a lease, for any table: acquire, a deadline inside the lease that every call
 * made by the work carries, owner-checked renewal up to a hold cap, the "still mine?" check before each
 * irreversible step, and release in `finally` with background retries. What happens is reported as
 * events; faults can be injected through hooks. Nothing here knows what the work is.
 */
import type { Kysely } from "kysely";
import { Deadline } from "./deadline";
import type { IntentRecorder, LeaseHandle, LeaseLock } from "./lease-lock";

export type LeaseEvent =
  | { kind: "acquired"; lease: LeaseHandle }
  | { kind: "refused"; heldUntil: Date | null }
  | { kind: "renewed"; lease: LeaseHandle }
  | { kind: "lost"; beforeStep: string | null }
  | { kind: "kept"; lease: LeaseHandle; reason: string }
  | { kind: "released" }
  | { kind: "release-failed"; attempt: number; attempts: number; error: unknown };

export interface LeaseHooks {
  /**
   * Runs at each checkpoint, and before the release (`nextStep` "release"): where the lab pauses an
   * operation on purpose, as a GC pause would. Resolves true when it paused: ownership is checked again.
   */
  atCheckpoint?(nextStep: string): Promise<boolean>;
  /** Runs before each release attempt; throwing fails that attempt (the lab's failing releases). */
  beforeRelease?(attempt: number): void;
}

export interface WithLeaseOptions<DB> {
  db: Kysely<DB>;
  ttlMs: number;
  /**
   * The safeguards beyond the textbook lease: a deadline inside the lease, renewal, and the ownership
   * check at checkpoints. Off, the work only gets `textbookTimeoutMs` and the TTL alone protects it.
   */
  safeguards?: boolean;
  /** How often the lease is renewed while the work runs; default TTL / 3. */
  renewEvery?: number;
  /** The most renewals may hold the lease for, from its acquisition; default 3 × TTL. */
  maxHold?: number;
  /** Recorded by the acquiring statement itself (see `IntentRecorder`). */
  intent?: IntentRecorder;
  onEvent?(event: LeaseEvent): void | Promise<void>;
  hooks?: LeaseHooks;
  /** Release attempts before the TTL is left to free the lease; default 4. */
  releaseAttempts?: number;
}

export interface LeaseSection {
  lease: LeaseHandle;
  intentId: string | null;
  /** The protected row as the acquisition left it (see `Acquisition`). */
  row: Record<string, unknown>;
  /** Every call the work makes carries `deadline.signal`; it fires before the lease can expire. */
  deadline: Deadline;
  /**
   * Before an irreversible step, with safeguards: makes sure the lease is still mine and unexpired, by
   * `verify` when given (an owner-checked write the work makes anyway, saving a round trip) or by a
   * renewal; then runs the hooks (and, after a pause, checks again). Without safeguards `verify` still
   * runs (the work's write is made) but its answer is not trusted to stop anything.
   */
  checkpoint(nextStep: string, verify?: () => Promise<boolean>): Promise<void>;
  /**
   * The work leaves something whose outcome is unknown for up to `ms` (a call that may still land): at
   * the end the lease is kept at least that long instead of being released.
   */
  keepFor(ms: number, reason: string): void;
}

/** Refused at acquisition: another holder has the lease (until `heldUntil`), or there is no such row. */
export class LeaseUnavailable extends Error {
  constructor(
    readonly reason: "held" | "not-found",
    readonly heldUntil: Date | null = null,
    readonly remainingMs = 0,
  ) {
    super(reason === "held" ? "the lease is held by another holder" : "no such row");
  }
}

/** The lease was found no longer mine at a checkpoint: the work stopped before `beforeStep`. */
export class LeaseLostError extends Error {
  constructor(readonly beforeStep: string | null) {
    super(`the lease was lost${beforeStep ? ` before the ${beforeStep} step` : ""}`);
  }
}

/**
 * Thrown by a hook to play a crash of the process: the work stops dead, and nothing more happens for it
 * (no `finally` work, no release, no renewal), so the lease holds until its TTL, as after a real crash.
 */
export class WorkCrashed extends Error {}

/** The most renewals hold a lease for unless told otherwise: long enough for slow work, not forever. */
export const defaultMaxHoldMs = (ttlMs: number): number => 3 * ttlMs;

/** Room kept between the work's deadline and the lease's expiry, for the last writes and the release. */
export const safetyMarginMs = (ttlMs: number): number => Math.min(1_000, Math.round(ttlMs / 5));
/** Without the safeguards, calls only have this generous timeout: the textbook lease trusts its TTL. */
export const textbookTimeoutMs = 60_000;

/** How long the work may still run under `lease`: what the database said was left, less time since and the margin. */
const budgetMs = (lease: LeaseHandle, ttlMs: number): number =>
  lease.remainingMs - safetyMarginMs(ttlMs) - (performance.now() - lease.answeredAt);

export async function withLease<DB, T>(
  lock: LeaseLock<DB>,
  rowId: string,
  options: WithLeaseOptions<DB>,
  work: (section: LeaseSection) => Promise<T>,
): Promise<T> {
  const { db, ttlMs, safeguards = true, onEvent = () => undefined, hooks = {} } = options;
  const maxHold = options.maxHold ?? defaultMaxHoldMs(ttlMs);
  const acquisition = await lock.acquire(db, rowId, {
    ttlMs,
    maxHoldMs: safeguards ? maxHold : null,
    intent: options.intent,
  });
  if (!acquisition.acquired) {
    if (acquisition.reason === "held") await onEvent({ kind: "refused", heldUntil: acquisition.heldUntil });
    throw acquisition.reason === "held"
      ? new LeaseUnavailable("held", acquisition.heldUntil, acquisition.remainingMs)
      : new LeaseUnavailable("not-found");
  }
  const { lease } = acquisition;
  await onEvent({ kind: "acquired", lease });

  const deadline = new Deadline(safeguards ? budgetMs(lease, ttlMs) : textbookTimeoutMs);
  // Fires the deadline when the lease is found gone; otherwise moves it with the new expiry.
  const renew = async (): Promise<boolean> => {
    if (!(await lease.renew())) {
      deadline.abort("lease lost");
      return false;
    }
    deadline.extend(budgetMs(lease, ttlMs));
    await onEvent({ kind: "renewed", lease });
    return true;
  };
  const heartbeat = safeguards
    ? setInterval(() => void renew().catch(() => undefined), Math.max(50, options.renewEvery ?? Math.floor(ttlMs / 3)))
    : undefined;
  heartbeat?.unref?.();
  let keep: { ms: number; reason: string } | null = null;

  const section: LeaseSection = {
    lease,
    intentId: acquisition.intentId,
    row: acquisition.row,
    deadline,
    async checkpoint(nextStep, verify) {
      const stillMine = async (check: () => Promise<boolean>) =>
        (await check()) && !deadline.signal.aborted && deadline.remainingMs() > 0;
      const lost = async () => {
        await onEvent({ kind: "lost", beforeStep: nextStep });
        return new LeaseLostError(nextStep);
      };
      if (!safeguards) {
        await verify?.();
        await hooks.atCheckpoint?.(nextStep);
        return;
      }
      if (!(await stillMine(verify ?? renew))) throw await lost();
      if ((await hooks.atCheckpoint?.(nextStep)) && !(await stillMine(renew))) throw await lost();
    },
    keepFor(ms, reason) {
      if (!keep || ms > keep.ms) keep = { ms, reason };
    },
  };

  let crashed = false;
  try {
    return await work(section);
  } catch (error) {
    crashed = error instanceof WorkCrashed;
    throw error;
  } finally {
    clearInterval(heartbeat);
    deadline.dispose();
    if (!crashed) {
      await hooks.atCheckpoint?.("release");
      const kept = keep as { ms: number; reason: string } | null;
      if (kept && (await lease.holdFor(kept.ms).catch(() => false)))
        await onEvent({ kind: "kept", lease, reason: kept.reason });
      else await release(lease, options.releaseAttempts ?? 4, hooks, onEvent);
    }
  }
}

/**
 * A failed release must not turn finished work into an error: it is reported and retried in the
 * background with backoff; if every attempt fails, the TTL frees the lease.
 */
async function release(
  lease: LeaseHandle,
  attempts: number,
  hooks: LeaseHooks,
  onEvent: (event: LeaseEvent) => void | Promise<void>,
): Promise<void> {
  const attempt = async (number: number): Promise<void> => {
    try {
      hooks.beforeRelease?.(number);
      await lease.release();
      await onEvent({ kind: "released" });
    } catch (error) {
      await Promise.resolve(onEvent({ kind: "release-failed", attempt: number, attempts, error })).catch(
        () => undefined,
      );
      if (number < attempts) setTimeout(() => void attempt(number + 1), 200 * 2 ** number).unref?.();
    }
  };
  await attempt(1);
}
