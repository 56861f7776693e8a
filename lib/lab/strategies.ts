/**
 * The strategies the lab runs side by side: the product's lease, and the textbook's wrong answers to
 * "only one switch per user at a time", each a `Guard` for the same switch steps.
 */
import { sql, type Kysely } from "kysely";
import pg from "pg";
import { databaseTimeouts } from "../../db/connection";
import type { Database } from "../../db/schema";
import { config } from "../core/config";
import { processSingleton } from "../core/process-singleton";
import { OperationInProgress, StaleWrite, UserNotFound } from "../core/problems";
import { Deadline, withLease } from "@lease-lock-lab/lease";
import { observedLease } from "@lease-lock-lab/lease/telemetry";
import { requireNow, unjournaled, type Guard, type GuardedSection, type GuardRequest } from "../switch/guard";
import { switchJournal } from "../switch/journal";
import { leaseGuard } from "../switch/lease-guard";
import { identityActionLease, readVersion, savePrimary } from "../switch/users";
import { faultyLock, PlayedProcess } from "./interceptors/faulty-lock";
import { recordingLease } from "./interceptors/recorded";
import { withStepFaults } from "./interceptors/step-faults";
import { textbookJournal, textbookLease, textbookTimeoutMs } from "./interceptors/textbook-lease";
import { separateRelease } from "./interceptors/separate-release";
import { unfencedSaves } from "./interceptors/unfenced-saves";
import { acquireRedisLock, redisLockKey, releaseRedisLock } from "./redis-lock";
import type { LabSettings, Strategy } from "./settings-schema";
import type { OperationRecorder, PhaseRecorder } from "./lane-recorder";

/**
 * The guard the settings ask for, with the lab's faults wrapped around it (lib/lab/interceptors/); with a
 * recorder, the waits and the lease's events become phases of the operation's timeline lane. `process` is
 * the one the operation runs in, shared with whatever else plays its death (crash-during-call.ts).
 */
export function guardFor(
  db: Kysely<Database>,
  settings: LabSettings,
  recorder?: OperationRecorder,
  process = new PlayedProcess(),
): Guard {
  const timeoutMs = settings.leaseTtlMs;
  const withFaults = (guard: Guard) => withStepFaults(guard, { db, settings, process, recorder });
  const guards: Record<Strategy, () => Guard> = {
    lease: () => withFaults(labLeaseGuard(settings, { recorder, process })),
    none: () => noGuard(timeoutMs),
    transaction: () => transactionGuard(timeoutMs, recorder),
    advisory: () => advisoryGuard(timeoutMs, recorder),
    optimistic: () => optimisticGuard(timeoutMs),
    "session-advisory": () => sessionAdvisoryGuard(timeoutMs),
    "in-process": () => inProcessGuard(timeoutMs),
    redis: () => withFaults(redisGuard(timeoutMs, recorder)),
  };
  return guards[settings.strategy]();
}

// The lease in OpenTelemetry, as the product's (lib/web/switch.ts): made once, when the lab is loaded, after
// instrumentation.ts set up any SDK.
const observedWithLease = observedLease(withLease);
const observedTextbookLease = observedLease(textbookLease);

/**
 * The product's lease guard as the settings configure it: with the safeguards, on `withLease`; without them,
 * on the textbook lease. The lab's lease faults wrap its lock, its wrong saves wrap its journal, and the
 * lane hears its events.
 */
export function labLeaseGuard(
  settings: LabSettings,
  { recorder, process = new PlayedProcess() }: { recorder?: OperationRecorder; process?: PlayedProcess } = {},
): Guard {
  const { releaseFailures, slowRenewalMs, unfencedSave, stall } = settings.faults;
  const runUnderLease = settings.leaseSafeguards ? observedWithLease : observedTextbookLease;
  const leased = settings.leaseSafeguards ? switchJournal : textbookJournal;
  const wronglySaved = unfencedSave ? unfencedSaves(leased) : leased;
  // Faults that act between the save and the release need the release sent on its own.
  const journal = releaseFailures > 0 || stall?.at === "saved" ? separateRelease(wronglySaved) : wronglySaved;
  return leaseGuard(
    {
      ttlMs: settings.leaseTtlMs,
      applyLimitMs: settings.provider.applyLimitMs,
      providerFences: settings.provider.enforceFencing,
    },
    {
      lock: faultyLock(identityActionLease, { releaseFailures, slowRenewalMs }, process),
      runUnderLease: recorder ? recordingLease(runUnderLease, recorder) : runUnderLease,
      journal,
    },
  );
}

/**
 * Runs `body` in a transaction, the waits for its pooled connection and for `lock` recorded as `waiting`:
 * what `transaction` and `advisory` look like on the timeline. The switch's requirements (its session, the
 * identity) are checked first on the connection it holds, so that a switch takes one connection once: a
 * check on a connection of its own would hand it back to the pool's queue between the two, and let
 * another request in ahead of the transaction.
 */
async function inLockingTransaction<T>(
  { db, requires }: Pick<GuardRequest, "db" | "requires">,
  recorder: OperationRecorder | undefined,
  lock: { what: string; take: (trx: Kysely<Database>) => Promise<void> },
  body: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  const connecting = recorder?.start("waiting", "for a pooled connection");
  return db.transaction().execute(async (trx) => {
    if (requires) await requireNow(trx, requires);
    recorder?.admit();
    connecting?.("connected");
    const locking = recorder?.start("waiting", `for ${lock.what}`);
    await lock.take(trx);
    locking?.("locked");
    return body(trx);
  });
}

const plainSave = (db: Kysely<Database>, userId: string) => async (primaryIdentityId: string) => {
  await savePrimary(db, userId, primaryIdentityId);
};

/** Runs `body` under a deadline of `budgetMs` (the TTL: these strategies have no lease to bound it). */
async function withDeadline<T>(budgetMs: number, body: (deadline: Deadline) => Promise<T>): Promise<T> {
  const deadline = new Deadline(budgetMs);
  try {
    return await body(deadline);
  } finally {
    deadline.dispose();
  }
}

const section = (
  db: Kysely<Database>,
  userId: string,
  deadline: Deadline,
  save = plainSave(db, userId),
): GuardedSection => ({
  db,
  deadline,
  savePrimary: save,
  ...unjournaled,
});

/** No guard at all: the race is there to be seen (and the lab's support tool, which writes without any lock). */
export const noGuard = (timeoutMs: number): Guard => ({
  run: ({ db, userId }, body) => withDeadline(timeoutMs, (deadline) => body(section(db, userId, deadline))),
});

/**
 * The `@Transactional` answer: a row lock held by an open transaction around the slow calls. Correct,
 * but every request (the waiting ones too) holds a pooled connection for the whole time.
 */
const transactionGuard = (timeoutMs: number, recorder?: OperationRecorder): Guard => ({
  checksRequirements: true,
  run: ({ db, userId, requires }, body) =>
    inLockingTransaction(
      { db, requires },
      recorder,
      {
        what: "the row lock (SELECT … FOR UPDATE)",
        take: async (trx) => {
          const row = await trx
            .selectFrom("users")
            .select("id")
            .where("id", "=", userId)
            .forUpdate()
            .executeTakeFirst();
          if (!row) throw new UserNotFound(userId);
        },
      },
      (trx) => withDeadline(timeoutMs, (deadline) => body(section(trx, userId, deadline))),
    ),
});

/** A transaction-scoped advisory lock on the user: the same connection cost as `transaction`. */
const advisoryGuard = (timeoutMs: number, recorder?: OperationRecorder): Guard => ({
  checksRequirements: true,
  run: ({ db, userId, requires }, body) =>
    inLockingTransaction(
      { db, requires },
      recorder,
      {
        what: "the advisory lock (pg_advisory_xact_lock)",
        take: async (trx) =>
          void (await sql`SELECT pg_advisory_xact_lock(hashtext(${advisoryKey(userId)}))`.execute(trx)),
      },
      (trx) => withDeadline(timeoutMs, (deadline) => body(section(trx, userId, deadline))),
    ),
});

/**
 * Optimistic concurrency: remember the row's version, do the work, write only if the version is
 * unchanged. It detects the lost race, but only after the provider has been changed.
 */
const optimisticGuard = (timeoutMs: number): Guard => ({
  async run({ db, userId }, body) {
    const version = await readVersion(db, userId);
    if (version === null) throw new UserNotFound(userId);
    return withDeadline(timeoutMs, (deadline) =>
      body(
        section(db, userId, deadline, async (primaryIdentityId) => {
          if (!(await savePrimary(db, userId, primaryIdentityId, version))) throw new StaleWrite(userId);
        }),
      ),
    );
  },
});

/** The lock key of a user's switch, shared by the advisory strategies. */
export const advisoryKey = (userId: string): string => `users.identity_action:${userId}`;

/** Names the pinned connection in `pg_stat_activity`, so the lab can find (and drop) it. */
export const sessionAdvisoryApplicationName = "lab:session-advisory";

/** The session-advisory switches' own connections open in this process now (the app's, not a pooler's). */
let pinnedConnectionsOpen = 0;
export const openPinnedConnections = (): number => pinnedConnectionsOpen;

/**
 * A session-level advisory lock (`pg_advisory_lock`) on a connection of its own, pinned for the whole
 * switch: no transaction stays open, but a connection is held (by every waiter, too). The lock lives as
 * long as that connection: if it drops, the lock is gone, another switch gets in, and nothing tells the
 * running one. It connects as the app's pool does: behind a transaction pooler the lock lands on a server
 * connection the pooler gives back after the statement, and closing this client does not close that one,
 * so the lock stays there, stranded (pooler-strands-session-lock).
 */
const sessionAdvisoryGuard = (timeoutMs: number): Guard => ({
  async run({ db, userId, operationId }, body) {
    const pinned = new pg.Client({
      connectionString: config.databaseUrl,
      application_name: `${sessionAdvisoryApplicationName}:${operationId}`,
      connectionTimeoutMillis: databaseTimeouts.connectMs,
    });
    // A dropped connection is only logged: the switch it protected runs on, unprotected (the lesson).
    pinned.on("error", (error) => console.error(`[session-advisory] pinned connection lost: ${error.message}`));
    await pinned.connect();
    pinnedConnectionsOpen++;
    try {
      await pinned.query("SELECT pg_advisory_lock(hashtext($1))", [advisoryKey(userId)]);
      return await withDeadline(timeoutMs, (deadline) => body(section(db, userId, deadline)));
    } finally {
      await pinned.end().catch(() => undefined); // closing the session releases its lock
      pinnedConnectionsOpen--;
    }
  },
});

/** One process's memory of the switches running per user: the tail of each user's promise chain. */
export type ProcessMemory = Map<string, Promise<unknown>>;

const thisProcess = processSingleton<ProcessMemory>("InProcess", () => new Map());

/**
 * A mutex in the server's memory: each user's switches queue on a promise chain. Correct in one process;
 * a second app instance has a memory (and a chain) of its own, so it does not wait at all.
 */
export const inProcessGuard = (timeoutMs: number, memory: ProcessMemory = thisProcess): Guard => ({
  async run({ db, userId }, body) {
    const previous = memory.get(userId) ?? Promise.resolve();
    const mine = previous.then(() => withDeadline(timeoutMs, (deadline) => body(section(db, userId, deadline))));
    const tail = mine.catch(() => undefined);
    memory.set(userId, tail);
    try {
      return await mine;
    } finally {
      if (memory.get(userId) === tail) memory.delete(userId);
    }
  },
});

/**
 * A Redis lock (lib/lab/redis-lock.ts) as teams write it: `SET NX PX` with the TTL, the work, the
 * token-checked release. The TTL is Redis's to keep: the holder never looks at it again, so its calls are
 * bounded by a client timeout of their own, and a holder paused past the TTL carries on (the lab's pause
 * fault strikes after the same steps as the lease's). No fence: the provider gets no token to refuse.
 */
const redisGuard = (ttlMs: number, recorder?: PhaseRecorder): Guard => ({
  async run({ db, userId }, body) {
    const key = redisLockKey(userId);
    const acquiring = recorder?.start("acquire", `SET ${key} token NX PX ${ttlMs}`);
    const acquisition = await acquireRedisLock(key, ttlMs);
    if (!acquisition.acquired) {
      acquiring?.("refused", `the key is held for ${acquisition.remainingMs} ms more`);
      throw new OperationInProgress(
        new Date(Date.now() + acquisition.remainingMs),
        acquisition.remainingMs,
        "Another request holds this user's Redis lock; try again when it ends.",
      );
    }
    acquiring?.("won");
    try {
      return await withDeadline(textbookTimeoutMs, (deadline) => body(section(db, userId, deadline)));
    } finally {
      const releasing = recorder?.start("release", "the token-checked script");
      const released = await releaseRedisLock(key, acquisition.token).catch(() => false);
      releasing?.(
        released ? "released" : "found-nothing",
        released ? null : "the key had expired or was another holder's",
      );
    }
  },
});
