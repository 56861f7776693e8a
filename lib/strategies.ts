/**
 * How the switch's steps are guarded against a concurrent switch for the same user. Each guard runs the
 * steps' body with the database handle to use, the deadline that bounds the provider calls, the save,
 * and the checkpoints; the steps themselves (lib/switch-primary.ts) never ask which strategy is in force.
 */
import { sql, type Kysely } from "kysely";
import type { Database, JournalStep } from "../db/schema";
import { Deadline } from "./deadline";
import { recordEvent, shortId } from "./events";
import { takeStall, type LabSettings, type Strategy } from "./lab-settings";
import { identityActionLease, type Lease } from "./lease-lock";
import { FencedOff, LeaseLost, OperationInProgress, StaleWrite, UserNotFound } from "./problems";
import * as journal from "./switch-journal";
import { readVersion, saveUser, type User } from "./users";

export interface GuardRequest {
  db: Kysely<Database>;
  userId: string;
  operationId: string;
  /** The identity the operation means to make primary: part of the lease's recorded intent. */
  targetIdentityId: string;
  settings: LabSettings;
}

export interface GuardedSection {
  db: Kysely<Database>;
  /** Every provider call made inside the section carries its signal. */
  deadline: Deadline;
  /** The lease's fencing token, for guards that have one. */
  fence?: bigint;
  savePrimary(user: User, primaryIdentityId: string): Promise<void>;
  /** Switches that earlier holders left unfinished, to reconcile before doing anything else. */
  leftovers: journal.JournalEntry[];
  markRecovered(entry: journal.JournalEntry, message: string): Promise<void>;
  /**
   * Records the step just reached (with the primary the switch starts from, at `acquired`) and, before
   * the next irreversible step, makes sure the guard still holds.
   */
  reached(step: JournalStep, fromIdentityId?: string): Promise<void>;
}

export interface Guard {
  run<T>(request: GuardRequest, body: (section: GuardedSection) => Promise<T>): Promise<T>;
}

/** Room kept between the provider calls' deadline and the lease's expiry, for the save and the release. */
export const safetyMarginMs = (ttlMs: number): number => Math.min(1_000, Math.round(ttlMs / 5));
/**
 * How long provider calls may still run under a lease the database said has `remainingMs` left when
 * asked at `askedAt` (monotonic): time spent since counts against it, and the safety margin is kept.
 */
const callBudgetMs = (remainingMs: number, ttlMs: number, askedAt: number): number => remainingMs - safetyMarginMs(ttlMs) - (performance.now() - askedAt);

/** How long one operation may keep renewing its lease: a stuck process cannot hold it forever. */
export const maxHoldMs = (ttlMs: number): number => 3 * ttlMs;
/** Without the safeguards (the textbook lease), provider calls only have this generous timeout. */
const textbookTimeoutMs = 60_000;

const plainSave = (db: Kysely<Database>) => async (user: User, primaryIdentityId: string) => {
  await saveUser(db, { ...user, primaryIdentityId });
};

/** The parts of a section that only the lease fills in. */
const unjournaled = { leftovers: [], markRecovered: async () => undefined, reached: async () => undefined };

/** The lease stored as data: one UPDATE to acquire, one to release, no connection held in between. */
const leaseGuard: Guard = {
  async run({ db, userId, operationId, targetIdentityId, settings }, body) {
    const ttlMs = settings.leaseTtlMs;
    const started = performance.now();
    const acquired = await identityActionLease.acquire(db, userId, ttlMs, journal.intentRecorder(operationId, targetIdentityId));
    if (!acquired.acquired) {
      throw acquired.reason === "not-found" ? new UserNotFound(userId) : new OperationInProgress(acquired.expiresAt, acquired.remainingMs);
    }
    const { lease } = acquired;
    const journalId = acquired.intentId!;
    const safeguards = settings.leaseSafeguards;
    const deadline = new Deadline(safeguards ? callBudgetMs(lease.remainingMs, ttlMs, started) : textbookTimeoutMs);
    const holder = new LeaseHolder(db, userId, lease, ttlMs, deadline, safeguards);

    try {
      const leftovers = await journal.openEntries(db, userId, journalId);
      for (const entry of leftovers.filter((each) => each.endedWith === null)) {
        await recordEvent(db, {
          userId,
          operationId,
          kind: "lease-taken-over",
          message: `The lease of operation ${shortId(entry.operationId)} (token ${entry.fence}) expired unreleased and was taken over by operation ${shortId(operationId)} (token ${lease.fence}).`,
        });
      }
      const stall = settings.faults.stall ? await takeStall(db) : null;
      const result = await body({
        db,
        deadline,
        fence: lease.fence,
        savePrimary: plainSave(db),
        leftovers,
        markRecovered: async (entry, message) => {
          await journal.resolve(db, entry.id, operationId);
          await recordEvent(db, { userId, operationId, kind: "recovered", message });
        },
        reached: async (step, fromIdentityId) => {
          await journal.advance(db, journalId, step, fromIdentityId);
          // A pause on purpose (as a GC pause or a slow disk would), for the lab and the crash tests.
          if (stall?.at === step) await new Promise((resolve) => setTimeout(resolve, stall.ms));
          if (step !== "saved") await holder.ensureStillMine(step);
        },
      });
      await journal.advance(db, journalId, "done");
      return result;
    } catch (error) {
      await journal.endUnfinished(db, journalId, error instanceof Error ? error.message : String(error)).catch(() => undefined);
      if (error instanceof LeaseLost) {
        await recordEvent(db, { userId, operationId, kind: "lease-lost", message: `Operation ${shortId(operationId)} lost its lease: ${error.detail}` });
      }
      if (error instanceof FencedOff) {
        await recordEvent(db, { userId, operationId, kind: "fenced", message: `Fenced call refused: operation ${shortId(operationId)} (token ${lease.fence}). ${error.detail}` });
      }
      throw error;
    } finally {
      holder.stop();
      await releaseLease(db, userId, operationId, lease.token, settings.faults.releaseFailures);
    }
  },
};

/**
 * Keeps an acquired lease honest: renews it (owner-checked) every TTL/3 up to a cap on total hold time,
 * moves the deadline with each renewal, and checks ownership before each irreversible step.
 */
class LeaseHolder {
  private readonly heartbeat: ReturnType<typeof setInterval> | undefined;
  private readonly heldSince = performance.now();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly userId: string,
    private readonly lease: Lease,
    private readonly ttlMs: number,
    private readonly deadline: Deadline,
    private readonly safeguards: boolean,
  ) {
    if (!safeguards) return;
    this.heartbeat = setInterval(() => void this.renew().catch(() => undefined), Math.max(100, Math.floor(ttlMs / 3)));
    this.heartbeat.unref?.();
  }

  /** Renews while under the cap (else only checks); false, and the deadline fired, when the lease is no longer mine. */
  private async renew(): Promise<boolean> {
    const asked = performance.now();
    const capped = asked - this.heldSince >= maxHoldMs(this.ttlMs);
    const mine = capped
      ? await identityActionLease.holds(this.db, this.userId, this.lease.token, this.ttlMs)
      : (await identityActionLease.renew(this.db, this.userId, this.lease.token, this.ttlMs)) !== null;
    if (!mine) this.deadline.abort("lease lost");
    else if (!capped) this.deadline.extend(callBudgetMs(this.ttlMs, this.ttlMs, asked));
    return mine;
  }

  async ensureStillMine(afterStep: JournalStep): Promise<void> {
    if (!this.safeguards) return;
    if (this.deadline.signal.aborted || !(await this.renew())) throw new LeaseLost(nextStepAfter[afterStep]);
  }

  stop(): void {
    clearInterval(this.heartbeat);
    this.deadline.dispose();
  }
}

const nextStepAfter: Record<JournalStep, string> = {
  acquired: "unlink",
  unlinked: "link",
  linked: "save",
  saved: "release",
  done: "release",
  resolved: "release",
};

/** Runs `body` under a deadline of `budgetMs`, whose timer is cleared when it ends. */
async function withDeadline<T>(budgetMs: number, body: (deadline: Deadline) => Promise<T>): Promise<T> {
  const deadline = new Deadline(budgetMs);
  try {
    return await body(deadline);
  } finally {
    deadline.dispose();
  }
}

/** No guard at all: the race is there to be seen. The calls are still bounded by the TTL. */
const noGuard: Guard = {
  run: ({ db, settings }, body) => withDeadline(settings.leaseTtlMs, (deadline) => body({ db, deadline, savePrimary: plainSave(db), ...unjournaled })),
};

/**
 * The `@Transactional` answer: a row lock held by an open transaction around the slow calls. Correct,
 * but every request (the waiting ones too) holds a pooled connection for the whole time.
 */
const transactionGuard: Guard = {
  run: ({ db, userId, settings }, body) =>
    db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom("users").select("id").where("id", "=", userId).forUpdate().executeTakeFirst();
      if (!row) throw new UserNotFound(userId);
      return withDeadline(settings.leaseTtlMs, (deadline) => body({ db: trx, deadline, savePrimary: plainSave(trx), ...unjournaled }));
    }),
};

/** A transaction-scoped advisory lock on the user: the same connection cost as `transaction`. */
const advisoryGuard: Guard = {
  run: ({ db, userId, settings }, body) =>
    db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext(${`users.identity_action:${userId}`}))`.execute(trx);
      return withDeadline(settings.leaseTtlMs, (deadline) => body({ db: trx, deadline, savePrimary: plainSave(trx), ...unjournaled }));
    }),
};

/**
 * Optimistic concurrency: remember the row's version, do the work, write only if the version is
 * unchanged. It detects the lost race, but only after the provider has been changed.
 */
const optimisticGuard: Guard = {
  async run({ db, userId, settings }, body) {
    const version = await readVersion(db, userId);
    if (version === null) throw new UserNotFound(userId);
    return withDeadline(settings.leaseTtlMs, (deadline) =>
      body({
        db,
        deadline,
        savePrimary: async (user, primaryIdentityId) => {
          if (!(await saveUser(db, { ...user, primaryIdentityId }, version))) throw new StaleWrite(userId);
        },
        ...unjournaled,
      }),
    );
  },
};

export const guards: Record<Strategy, Guard> = {
  lease: leaseGuard,
  none: noGuard,
  transaction: transactionGuard,
  advisory: advisoryGuard,
  optimistic: optimisticGuard,
};

const releaseAttempts = 4;

/**
 * A failed release must not turn a finished operation into an error: it is logged and retried in the
 * background with backoff, and the TTL frees the lease if every attempt fails. `injectedFailures` (a
 * lab fault) makes the first attempts fail on purpose.
 */
async function releaseLease(db: Kysely<Database>, userId: string, operationId: string, token: string, injectedFailures: number): Promise<void> {
  const attempt = async (number: number): Promise<void> => {
    try {
      if (number <= injectedFailures) throw new Error("injected release failure (lab fault)");
      await identityActionLease.release(db, userId, token);
    } catch (error) {
      const last = number >= releaseAttempts;
      console.error(`[lease] release of ${userId}'s lease failed (attempt ${number} of ${releaseAttempts}):`, error);
      await recordEvent(db, {
        userId,
        operationId,
        kind: "release-failed",
        message: `Releasing operation ${shortId(operationId)}'s lease failed (attempt ${number} of ${releaseAttempts}): ${
          last ? "the TTL will free it." : "retrying in the background."
        }`,
      }).catch(() => undefined);
      if (!last) setTimeout(() => void attempt(number + 1), 200 * 2 ** number).unref();
    }
  };
  await attempt(1);
}
