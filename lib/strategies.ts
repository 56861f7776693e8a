/**
 * How the switch's steps are guarded against a concurrent switch for the same user. Each guard runs the
 * steps' body with the database handle to use, the signal that bounds the provider calls, and the save.
 */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema";
import type { Strategy } from "./lab-settings";
import { identityActionLease } from "./lease-lock";
import { OperationInProgress, UserNotFound } from "./problems";
import { saveUser, type User } from "./users";

export interface GuardRequest {
  db: Kysely<Database>;
  userId: string;
  ttlMs: number;
}

export interface GuardedSection {
  db: Kysely<Database>;
  /** Fires at the deadline: every provider call made inside the section is aborted then. */
  signal: AbortSignal;
  /** The lease's fencing token, for guards that have one. */
  fence?: bigint;
  savePrimary(user: User, primaryIdentityId: string): Promise<void>;
}

export interface Guard {
  run<T>(request: GuardRequest, body: (section: GuardedSection) => Promise<T>): Promise<T>;
}

/** Room kept between the provider calls' deadline and the lease's expiry, for the save and the release. */
export const safetyMarginMs = (ttlMs: number): number => Math.min(1_000, Math.round(ttlMs / 5));

const deadlineSignal = (budgetMs: number): AbortSignal => AbortSignal.timeout(Math.max(0, Math.floor(budgetMs)));

const plainSave = (db: Kysely<Database>) => (user: User, primaryIdentityId: string) => saveUser(db, { ...user, primaryIdentityId });

/** The lease stored as data: one UPDATE to acquire, one to release, no connection held in between. */
const leaseGuard: Guard = {
  async run({ db, userId, ttlMs }, body) {
    const started = performance.now();
    const acquired = await identityActionLease.acquire(db, userId, ttlMs);
    if (!acquired.acquired) {
      throw acquired.reason === "not-found" ? new UserNotFound(userId) : new OperationInProgress(acquired.expiresAt, acquired.remainingMs);
    }
    const { lease } = acquired;
    // The database told us how long the lease has; time already spent since we asked counts against it.
    try {
      const budgetMs = lease.remainingMs - safetyMarginMs(ttlMs) - (performance.now() - started);
      return await body({ db, signal: deadlineSignal(budgetMs), fence: lease.fence, savePrimary: plainSave(db) });
    } finally {
      await releaseLease(db, userId, lease.token);
    }
  },
};

/** No guard at all: the race is there to be seen. The calls are still bounded by the TTL. */
const noGuard: Guard = {
  run: ({ db, ttlMs }, body) => body({ db, signal: deadlineSignal(ttlMs), savePrimary: plainSave(db) }),
};

export const guards: Record<Strategy, Guard> = { lease: leaseGuard, none: noGuard };

/**
 * A failed release must not turn a finished operation into an error: it is logged and retried in the
 * background with backoff, and the TTL frees the lease if every attempt fails.
 */
async function releaseLease(db: Kysely<Database>, userId: string, token: string): Promise<void> {
  const attempt = async (number: number): Promise<void> => {
    try {
      await identityActionLease.release(db, userId, token);
    } catch (error) {
      console.error(`[lease] release of ${userId}'s lease failed (attempt ${number} of ${releaseAttempts}):`, error);
      if (number < releaseAttempts) setTimeout(() => void attempt(number + 1), 200 * 2 ** number).unref();
    }
  };
  await attempt(1);
}

const releaseAttempts = 4;
