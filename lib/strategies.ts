/**
 * How the switch's steps are guarded against a concurrent switch for the same user. Each guard runs the
 * steps' body with the database handle to use, the signal that bounds the provider calls, and the save;
 * the steps themselves (lib/switch-primary.ts) never ask which strategy is in force.
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../db/schema";
import type { Strategy } from "./lab-settings";
import { identityActionLease } from "./lease-lock";
import { OperationInProgress, StaleWrite, UserNotFound } from "./problems";
import { readVersion, saveUser, type User } from "./users";

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

const plainSave = (db: Kysely<Database>) => async (user: User, primaryIdentityId: string) => {
  await saveUser(db, { ...user, primaryIdentityId });
};

/** The lease stored as data: one UPDATE to acquire, one to release, no connection held in between. */
const leaseGuard: Guard = {
  async run({ db, userId, ttlMs }, body) {
    const started = performance.now();
    const acquired = await identityActionLease.acquire(db, userId, ttlMs);
    if (!acquired.acquired) {
      throw acquired.reason === "not-found" ? new UserNotFound(userId) : new OperationInProgress(acquired.expiresAt, acquired.remainingMs);
    }
    const { lease } = acquired;
    try {
      // The database told us how long the lease has; time already spent since we asked counts against it.
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

/**
 * The `@Transactional` answer: a row lock held by an open transaction around the slow calls. Correct,
 * but every request (the waiting ones too) holds a pooled connection for the whole time.
 */
const transactionGuard: Guard = {
  run: ({ db, userId, ttlMs }, body) =>
    db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom("users").select("id").where("id", "=", userId).forUpdate().executeTakeFirst();
      if (!row) throw new UserNotFound(userId);
      return body({ db: trx, signal: deadlineSignal(ttlMs), savePrimary: plainSave(trx) });
    }),
};

/** A transaction-scoped advisory lock on the user: the same connection cost as `transaction`. */
const advisoryGuard: Guard = {
  run: ({ db, userId, ttlMs }, body) =>
    db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext(${`users.identity_action:${userId}`}))`.execute(trx);
      return body({ db: trx, signal: deadlineSignal(ttlMs), savePrimary: plainSave(trx) });
    }),
};

/**
 * Optimistic concurrency: remember the row's version, do the work, write only if the version is
 * unchanged. It detects the lost race, but only after the provider has been changed.
 */
const optimisticGuard: Guard = {
  async run({ db, userId, ttlMs }, body) {
    const version = await readVersion(db, userId);
    if (version === null) throw new UserNotFound(userId);
    return body({
      db,
      signal: deadlineSignal(ttlMs),
      savePrimary: async (user, primaryIdentityId) => {
        if (!(await saveUser(db, { ...user, primaryIdentityId }, version))) throw new StaleWrite(userId);
      },
    });
  },
};

export const guards: Record<Strategy, Guard> = {
  lease: leaseGuard,
  none: noGuard,
  transaction: transactionGuard,
  advisory: advisoryGuard,
  optimistic: optimisticGuard,
};

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
