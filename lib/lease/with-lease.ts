/**
 * Runs a piece of work under a lease, for any table: acquire, a deadline inside the lease that every call
 * made by the work carries, owner-checked renewal up to a hold cap, the "still mine?" check before each
 * irreversible step, and release in `finally` with background retries. What happens is reported as
 * events. Nothing here knows what the work is.
 */
import type { Kysely, Selectable } from "kysely";
import { Deadline } from "./deadline.ts";
import type { AcquireOptions, Acquisition, LeaseHandle, LeaseLock, RowId, StatementRecorder } from "./lease-lock.ts";
import { Renewal } from "./renewal.ts";

export type LeaseEvent =
  | { kind: "acquired"; lease: LeaseHandle }
  | { kind: "refused"; heldUntil: Date | null }
  | { kind: "renewed"; lease: LeaseHandle }
  | { kind: "lost"; beforeStep: string | null }
  | { kind: "kept"; lease: LeaseHandle; reason: string }
  /** Keeping the lease for an unknown outcome failed with an error: it is left as it is, and its TTL frees it. */
  | { kind: "keep-failed"; reason: string; error: unknown }
  | { kind: "released" }
  /** The release matched no row: the lease had expired and was taken by someone else (or cleared). */
  | { kind: "release-found-nothing" }
  | { kind: "release-failed"; attempt: number; attempts: number; error: unknown };

export interface WithLeaseOptions<DB> {
  db: Kysely<DB>;
  ttlMs: number;
  /** How often the lease is renewed while the work runs; default TTL / 3. */
  renewEvery?: number;
  /** The most renewals may hold the lease for, from its acquisition; default 3 × TTL. */
  maxHold?: number;
  /** Recorded by the acquiring statement itself (see `StatementRecorder`). */
  intent?: StatementRecorder;
  /** Recorded by each statement that moves the expiry (see `StatementRecorder`). */
  onExtend?: StatementRecorder;
  /** What else the acquisition requires, and reads sent with it (see `AcquireOptions`). */
  requires?: AcquireOptions["requires"];
  also?: AcquireOptions["also"];
  /** The values of the `param`s in `intent`, `onExtend`, `requires` and `also` (see `StatementRecorder`). */
  values?: AcquireOptions["values"];
  onEvent?(event: LeaseEvent): void | Promise<void>;
  /** Release attempts before the TTL is left to free the lease; default 4. */
  releaseAttempts?: number;
}

export interface LeaseSection<DB = unknown, TB extends keyof DB & string = keyof DB & string> {
  lease: LeaseHandle<DB, TB>;
  intentId: string | null;
  /** The protected row as the acquisition left it (see `Acquisition`). */
  row: Selectable<DB[TB]>;
  /** What the reads sent with the acquisition returned (`also`). */
  also: Record<string, Record<string, unknown>[]>;
  /** Every call the work makes carries `deadline.signal`; it fires before the lease can expire. */
  deadline: Deadline;
  /**
   * Before an irreversible step: makes sure the lease is still mine and unexpired, by `verify` when given
   * (an owner-checked write the work makes anyway, saving a round trip) or by a renewal. Throws
   * `LeaseLostError` when it is not. A check is only as good as the moment it was made: a write that
   * must not land after a loss carries its own condition (`lease.update`).
   */
  checkpoint(nextStep: string, verify?: () => Promise<boolean>): Promise<void>;
  /**
   * The work leaves something whose outcome is unknown for up to `ms` (a call that may still land): at
   * the end the lease is kept at least that long instead of being released.
   */
  keepFor(ms: number, reason: string): void;
  /**
   * Ends the lease with the work's own last write: renewal stops (one in flight answers first), then `write`
   * runs, a statement that also clears the lease (`lease.releasing`), answering whether it applied. When it
   * did, the lease is released: nothing more is sent at the end. One round trip instead of two.
   */
  releaseWith(write: () => Promise<boolean>): Promise<boolean>;
}

/** `withLease`'s shape: code that runs work under a lease takes one, so that a wrapper (an observer) can stand in. */
export type RunUnderLease = <DB, TB extends keyof DB & string, T>(
  lock: LeaseLock<DB, TB>,
  rowId: RowId,
  options: WithLeaseOptions<DB>,
  work: (section: LeaseSection<DB, TB>) => Promise<T>,
) => Promise<T>;

/** Refused at acquisition: another holder has the lease (until `heldUntil`), its requirement is unmet, or no row. */
export class LeaseUnavailable extends Error {
  constructor(
    readonly reason: "held" | "unmet" | "not-found",
    readonly heldUntil: Date | null = null,
    readonly remainingMs = 0,
  ) {
    super(unavailable[reason]);
  }
}

const unavailable = {
  held: "the lease is held by another holder",
  unmet: "what the acquisition requires is not so",
  "not-found": "no such row",
};

/** The lease was found no longer mine at a checkpoint: the work stopped before `beforeStep`. */
export class LeaseLostError extends Error {
  constructor(readonly beforeStep: string | null) {
    super(`the lease was lost${beforeStep ? ` before the ${beforeStep} step` : ""}`);
  }
}

/** The most renewals hold a lease for unless told otherwise: long enough for slow work, not forever. */
export const defaultMaxHoldMs = (ttlMs: number): number => 3 * ttlMs;

/** Room kept between the work's deadline and the lease's expiry, for the last writes and the release. */
export const safetyMarginMs = (ttlMs: number): number => Math.min(1_000, Math.round(ttlMs / 5));

/**
 * Runs `work` while holding the lease on row `rowId`, and releases it afterwards (or keeps it, when the
 * work says an outcome is still unknown). Throws `LeaseUnavailable` when another holder has it.
 *
 * @example
 * await withLease(jobLease, jobId, { db, ttlMs: 30_000 }, async ({ lease, deadline, checkpoint }) => {
 *   await checkpoint("charge");
 *   await paymentApi.charge(invoice, { signal: deadline.signal, fence: lease.fence });
 *   if (!(await lease.update({ status: "charged" }))) throw new LeaseLostError("save");
 * });
 */
export async function withLease<DB, TB extends keyof DB & string, T>(
  lock: LeaseLock<DB, TB>,
  rowId: RowId,
  options: WithLeaseOptions<DB>,
  work: (section: LeaseSection<DB, TB>) => Promise<T>,
): Promise<T> {
  const { db, ttlMs, onEvent = () => undefined } = options;
  const acquisition = await lock.acquire(db, rowId, {
    ttlMs,
    maxHoldMs: options.maxHold ?? defaultMaxHoldMs(ttlMs),
    intent: options.intent,
    onExtend: options.onExtend,
    requires: options.requires,
    also: options.also,
    values: options.values,
  });
  if (!acquisition.acquired) throw await refusal(acquisition, onEvent);
  const lease = acquisition.lease as LeaseHandle;
  await onEvent({ kind: "acquired", lease });

  const deadline = new Deadline(budgetMs(lease, ttlMs));
  // Fires the deadline when the lease is found gone; otherwise moves it with the new expiry.
  const renew = async (): Promise<boolean> => {
    if (!(await lease.renew())) {
      deadline.abort("lease-lost");
      return false;
    }
    deadline.extend(budgetMs(lease, ttlMs));
    await onEvent({ kind: "renewed", lease });
    return true;
  };
  const renewEvery = Math.max(50, options.renewEvery ?? Math.floor(ttlMs / 3));
  const renewal = new Renewal(renewEvery, async () => {
    deadline.renewalStarted(renewEvery);
    await renew().catch((error: unknown) => {
      deadline.renewalFailed();
      throw error;
    });
  });
  const ending: Ending = { keep: { ms: 0, reason: "" }, released: false };
  const releaseWith = async (write: () => Promise<boolean>): Promise<boolean> => {
    if (ending.keep.ms > 0) throw new Error("a lease kept for an unknown outcome is not released with a write");
    await renewal.stop();
    ending.released = await write();
    if (ending.released) await onEvent({ kind: "released" });
    return ending.released;
  };
  try {
    return await work(section(acquisition, { deadline, renew, ending, onEvent, releaseWith }));
  } finally {
    // A renewal in flight answers first, so no event of it can follow the release.
    await renewal.stop();
    deadline.dispose();
    if (!ending.released) await finish(lease, ending.keep, options.releaseAttempts ?? 4, onEvent);
  }
}

/** The refusal as an error, told first as an event when another holder has the lease. */
async function refusal(
  acquisition: Extract<Acquisition<unknown>, { acquired: false }>,
  onEvent: (event: LeaseEvent) => void | Promise<void>,
): Promise<LeaseUnavailable> {
  if (acquisition.reason !== "held") return new LeaseUnavailable(acquisition.reason);
  await onEvent({ kind: "refused", heldUntil: acquisition.heldUntil });
  return new LeaseUnavailable("held", acquisition.heldUntil, acquisition.remainingMs);
}

/** How long the work may still run under `lease`: what the database said was left, less time since and the margin. */
const budgetMs = (lease: LeaseHandle, ttlMs: number): number =>
  lease.remainingMs - safetyMarginMs(ttlMs) - (performance.now() - lease.answeredAt);

/** What the work asked to keep the lease for at the end (`keepFor`): the longest ask wins; 0: nothing. */
interface Keep {
  ms: number;
  reason: string;
}

/** How the work ends its lease: kept for an unknown outcome, or already released by its last write. */
interface Ending {
  keep: Keep;
  released: boolean;
}

interface SectionParts {
  deadline: Deadline;
  renew: () => Promise<boolean>;
  ending: Ending;
  onEvent: (event: LeaseEvent) => void | Promise<void>;
  releaseWith: LeaseSection["releaseWith"];
}

function section<DB, TB extends keyof DB & string>(
  acquisition: Extract<Acquisition<DB, TB>, { acquired: true }>,
  { deadline, renew, ending, onEvent, releaseWith }: SectionParts,
): LeaseSection<DB, TB> {
  const stillMine = async (check: () => Promise<boolean>) =>
    (await check()) && !deadline.signal.aborted && deadline.remainingMs() > 0;
  return {
    lease: acquisition.lease,
    intentId: acquisition.intentId,
    row: acquisition.row,
    also: acquisition.also,
    deadline,
    async checkpoint(nextStep, verify) {
      if (await stillMine(verify ?? renew)) return;
      await onEvent({ kind: "lost", beforeStep: nextStep });
      throw new LeaseLostError(nextStep);
    },
    keepFor(ms, reason) {
      if (ms > ending.keep.ms) Object.assign(ending.keep, { ms, reason });
    },
    releaseWith,
  };
}

/** The end of the work: keep the lease for an unknown outcome, or release it. It always runs. */
async function finish(
  lease: LeaseHandle,
  keep: Keep,
  attempts: number,
  onEvent: (event: LeaseEvent) => void | Promise<void>,
): Promise<void> {
  if (keep.ms > 0) {
    try {
      if (await lease.holdFor(keep.ms)) return void (await onEvent({ kind: "kept", lease, reason: keep.reason }));
    } catch (error) {
      // Unknown whether the hold applied: releasing now could free a lease that must be kept. Its TTL
      // frees it instead.
      return void (await onEvent({ kind: "keep-failed", reason: keep.reason, error }));
    }
  }
  await releaseWithRetries(lease, attempts, onEvent);
}

/**
 * A failed release must not turn finished work into an error: it is reported and retried in the
 * background with backoff; if every attempt fails, the TTL frees the lease.
 */
async function releaseWithRetries(
  lease: LeaseHandle,
  attempts: number,
  onEvent: (event: LeaseEvent) => void | Promise<void>,
): Promise<void> {
  const attempt = async (number: number): Promise<void> => {
    try {
      const cleared = await lease.release();
      await onEvent({ kind: cleared ? "released" : "release-found-nothing" });
    } catch (error) {
      await Promise.resolve(onEvent({ kind: "release-failed", attempt: number, attempts, error })).catch(
        () => undefined,
      );
      if (number < attempts) setTimeout(() => void attempt(number + 1), 200 * 2 ** number).unref?.();
    }
  };
  await attempt(1);
}
