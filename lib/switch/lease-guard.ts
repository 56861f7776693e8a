/**
 * The product's guard: the lease stored as data on the user row (one UPDATE to acquire, one to release,
 * no connection held in between), with the switch's intent journaled by the acquiring statement itself.
 * Every write the holder makes to the user row or the journal carries the lease's condition in its own
 * WHERE: a check before a step is only as good as the moment it was made, and a holder may pause after it.
 *
 * The rule for a slow third party: never trust a read while a call's outcome is unknown. A provider write
 * whose answer was lost may still land until the provider's own limit has passed. So the operation keeps
 * its lease until then (unless the provider enforces fencing tokens), and a later holder that finds such
 * a call in its journal either reads with its newer token (a fenced read: older writes are refused from
 * then on), or waits until the call can no longer land, or refuses.
 */
import { setTimeout as pause } from "node:timers/promises";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { FencedOff, LeaseLost, OperationInProgress, UserNotFound } from "../core/problems";
import { LeaseLostError, LeaseUnavailable, mergedValues, withLease } from "@lease-lock-lab/lease";
import type { LeaseEvent, LeaseLock, LeaseSection, RunUnderLease } from "@lease-lock-lab/lease";
import { recordEvent, shortId } from "./events";
import { writeAfter, type Guard, type GuardedSection, type GuardRequest } from "./guard";
import { switchJournal, type JournalEntry, type SwitchJournal } from "./journal";
import { identityActionLease, userFromRow } from "./users";

export interface LeaseGuardConfig {
  ttlMs: number;
  /** The provider's limit: a request it has not applied this long after it arrived is never applied. */
  applyLimitMs: number;
  /** Whether the provider refuses a write whose fencing token is older than one it has seen. */
  providerFences: boolean;
}

/** What the guard runs on: the lock, the way work runs under it, and the journal's statements. */
export interface LeaseGuardParts {
  lock: LeaseLock<Database, "users">;
  runUnderLease: RunUnderLease;
  journal: SwitchJournal;
}

export const productLeaseParts: LeaseGuardParts = {
  lock: identityActionLease,
  runUnderLease: withLease,
  journal: switchJournal,
};

export function leaseGuard(config: LeaseGuardConfig, parts: LeaseGuardParts = productLeaseParts): Guard {
  async function run<T>(request: GuardRequest, body: (section: GuardedSection) => Promise<T>, again = true) {
    const { db, userId, operationId, targetIdentityId } = request;
    // The requirement, the intent and the read of what earlier holders left: all in the acquiring statement.
    // The statements are the same objects at every call (so compiled once); the values are this operation's.
    const { recording } = parts.journal;
    const recorded = recording.values({ userId, operationId, targetIdentityId, applyLimitMs: config.applyLimitMs });
    const options = {
      db,
      ttlMs: config.ttlMs,
      ...recording.statements,
      requires: request.requires?.condition,
      values: mergedValues(request.requires?.values, recorded),
      onEvent: narrateReleaseFailures(db, request),
    };
    try {
      return await parts.runUnderLease(parts.lock, userId, options, (leased) =>
        runJournaled(config, parts.journal, request, leased, body),
      );
    } catch (error) {
      if (!(error instanceof LeaseUnavailable)) throw error;
      if (error.reason === "held") throw new OperationInProgress(error.heldUntil, error.remainingMs);
      // No such user: the session's part first, as a read of the user answers (another user's id is a 403).
      if (error.reason === "not-found") throw (await request.requires?.unmet(db)) ?? new UserNotFound(userId);
      // Unmet: which part, read now. All of it holding now (it changed meanwhile) is worth one more try.
      const why = await request.requires?.unmet(db);
      if (why) throw why;
      if (again) return run(request, body, false);
      throw new OperationInProgress(null, 1_000, "The request's conditions kept changing; try again.");
    }
  }
  return { run: (request, body) => run(request, body), checksRequirements: true };
}

/** A failed release is logged and told in words; the lease library retries it. */
const narrateReleaseFailures =
  (db: Kysely<Database>, { userId, operationId }: GuardRequest) =>
  async (event: LeaseEvent) => {
    if (event.kind !== "release-failed") return;
    const last = event.attempt >= event.attempts;
    console.error(
      `[lease] release of ${userId}'s lease failed (attempt ${event.attempt} of ${event.attempts}):`,
      event.error,
    );
    const next = last ? "the TTL will free it." : "retrying in the background.";
    await recordEvent(db, {
      userId,
      operationId,
      kind: "release-failed",
      message: `Releasing operation ${shortId(operationId)}'s lease failed (attempt ${event.attempt} of ${event.attempts}): ${next}`,
    });
  };

/** The journal of one operation under its lease: what the section's steps write, and how it ended. */
interface Progress {
  journalId: string;
  /** The primary the intent recorded as the switch's starting point. */
  journaledFrom: string;
  /** The save and `done` were written together: nothing is left to record at the end. */
  finished: boolean;
  /** Whether this operation may have sent a provider write: until then, a failure leaves nothing to settle. */
  writesBegun: boolean;
  outcomeUnknown: boolean;
}

async function runJournaled<T>(
  config: LeaseGuardConfig,
  journal: SwitchJournal,
  request: GuardRequest,
  leased: LeaseSection<Database, "users">,
  body: (section: GuardedSection) => Promise<T>,
): Promise<T> {
  const { db } = request;
  const acquiredUser = userFromRow(leased.row);
  const progress: Progress = {
    journalId: leased.intentId!,
    journaledFrom: acquiredUser.primaryIdentityId,
    finished: false,
    writesBegun: false,
    outcomeUnknown: false,
  };
  const leftovers = journal.leftoversFrom(leased.also.leftovers ?? []);
  await narrateTakeOvers(db, request, leased, leftovers);
  try {
    const section = journaledSection(config, journal, request, leased, progress, leftovers);
    const result = await body({ ...section, acquiredUser: leftovers.length === 0 ? acquiredUser : undefined });
    // No separate `saved` step: the save, `done` and the release are one write (`finishing`), or nothing was
    // saved: then `done` and the release are.
    if (!progress.finished)
      await leased.releaseWith(() => journal.finishAndRelease(db, progress.journalId, leased.lease));
    return result;
  } catch (error) {
    await recordEnding(config, journal, request, leased, progress, error);
    throw error;
  }
}

async function narrateTakeOvers(
  db: Kysely<Database>,
  { userId, operationId }: GuardRequest,
  { lease }: LeaseSection<Database, "users">,
  leftovers: JournalEntry[],
): Promise<void> {
  for (const entry of leftovers.filter((each) => each.endedWith === null)) {
    await recordEvent(db, {
      userId,
      operationId,
      kind: "lease-taken-over",
      message:
        `The lease of operation ${shortId(entry.operationId)} (token ${entry.fence}) expired unreleased and was ` +
        `taken over by operation ${shortId(operationId)} (token ${lease.fence}).`,
    });
  }
}

/** How the operation ended, for the next holder: its entry closed with the error, or gone if it wrote nothing. */
async function recordEnding(
  config: LeaseGuardConfig,
  journal: SwitchJournal,
  { db, userId, operationId }: GuardRequest,
  { lease }: LeaseSection<Database, "users">,
  progress: Progress,
  error: unknown,
): Promise<void> {
  const endedWith = error instanceof Error ? error.message : String(error);
  const ended =
    progress.writesBegun || progress.outcomeUnknown
      ? journal.endUnfinished(db, progress.journalId, endedWith, progress.outcomeUnknown ? config.applyLimitMs : null)
      : journal.discard(db, progress.journalId);
  await ended.catch(() => undefined);
  if (error instanceof LeaseLost) {
    const message = `Operation ${shortId(operationId)} lost its lease: ${error.detail}`;
    await recordEvent(db, { userId, operationId, kind: "lease-lost", message });
  }
  if (error instanceof FencedOff) {
    const message = `Fenced call refused: operation ${shortId(operationId)} (token ${lease.fence}). ${error.detail}`;
    await recordEvent(db, { userId, operationId, kind: "fenced", message });
  }
}

function journaledSection(
  config: LeaseGuardConfig,
  journal: SwitchJournal,
  { db, userId, operationId }: GuardRequest,
  leased: LeaseSection<Database, "users">,
  progress: Progress,
  leftovers: JournalEntry[],
): Omit<GuardedSection, "acquiredUser"> {
  const { lease, deadline } = leased;
  // A provider that fences is read with the newer token; otherwise only time shuts a lost write out.
  const landsUnlessWaited = (entry: JournalEntry) => !config.providerFences && entry.inFlightForMs > 0;
  // The wait, when the deadline leaves time for it (else the request is refused instead).
  const inFlightWaitMs = (entry: JournalEntry) =>
    landsUnlessWaited(entry) && entry.inFlightForMs < deadline.remainingMs() ? entry.inFlightForMs : 0;
  // The one lease-lost error of the switch: the library's, said as the switch's problem where it is thrown.
  const checkpoint = (write: string, verify?: () => Promise<boolean>) =>
    leased.checkpoint(write, verify).catch((error: unknown) => {
      throw error instanceof LeaseLostError ? new LeaseLost(error.beforeStep ?? write) : error;
    });
  return {
    db,
    deadline,
    fence: lease.fence,
    generation: lease.generation,
    savePrimary: leasedSave(journal, db, leased, progress),
    leftovers,
    async markRecovered(entry, message) {
      await journal.resolve(db, entry.id, operationId);
      await recordEvent(db, { userId, operationId, kind: "recovered", message });
    },
    async reached(step, fromIdentityId) {
      // Two steps need no write. The intent is `acquired` from the same starting point: the lease is then known
      // to be mine from the acquisition's own answer (the deadline's remaining time), as long as only the lease
      // writes its columns (a save that wipes them is caught at the next owner-checked write instead). And
      // `linked` is recorded by the save's own statement, which carries the lease's condition in its WHERE.
      const unrecorded = (step === "acquired" && fromIdentityId === progress.journaledFrom) || step === "linked";
      const record = unrecorded
        ? async () => true
        : () => journal.advance(db, progress.journalId, lease, step, fromIdentityId);
      if (fromIdentityId !== undefined) progress.journaledFrom = fromIdentityId;
      await checkpoint(writeAfter[step], record);
      if (step === "acquired") progress.writesBegun = true;
    },
    async ensureHeld(nextWrite) {
      await checkpoint(nextWrite);
      progress.writesBegun = true;
    },
    callMayStillLand() {
      progress.outcomeUnknown = true;
      // Without fencing, only time makes a lost write harmless: hold the lease until it cannot land.
      if (!config.providerFences) leased.keepFor(config.applyLimitMs, "a provider call's outcome is unknown");
    },
    inFlightWaitMs,
    async settleInFlight(entry) {
      if (!landsUnlessWaited(entry)) return;
      const waitMs = inFlightWaitMs(entry);
      if (waitMs > 0) return void (await pause(waitMs));
      throw new OperationInProgress(
        entry.inFlightUntil,
        entry.inFlightForMs,
        `A provider call of operation ${shortId(entry.operationId)} may still land until ` +
          `${entry.inFlightUntil?.toISOString()}: nothing can be read safely before then.`,
        entry.operationId,
      );
    },
  };
}

/**
 * The saves under the lease, owner-checked: recovery's, and the switch's last write, which releases the
 * lease in the same statement (unless the journal says it did not). Nothing saved: the lease was lost.
 */
function leasedSave(
  journal: SwitchJournal,
  db: Kysely<Database>,
  leased: LeaseSection<Database, "users">,
  progress: Progress,
): GuardedSection["savePrimary"] {
  const { lease } = leased;
  const lostUnlessSaved = (saved: boolean, step: string) => {
    if (!saved) throw new LeaseLost(step);
  };
  return async (primaryIdentityId, saveOptions) => {
    if (!saveOptions?.finishing)
      return lostUnlessSaved(await journal.savePrimary(db, lease, primaryIdentityId), "recover");
    let saved = false;
    await leased.releaseWith(async () => {
      const finished = await journal.saveAndFinish(db, progress.journalId, lease, primaryIdentityId);
      saved = finished.saved;
      return finished.released;
    });
    lostUnlessSaved(saved, "save");
    progress.finished = true;
  };
}
