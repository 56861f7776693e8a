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
import type { JournalStep } from "../../db/schema";
import { FencedOff, LeaseLost, OperationCrashed, OperationInProgress, UserNotFound } from "../core/problems";
import { LeaseLostError, LeaseUnavailable, type LeaseEvent } from "../lease";
import { textbookTimeoutMs, withLeaseForTeaching, WorkCrashed, type LeaseHooks } from "../lease/testing";
import { recordEvent, shortId } from "./events";
import type { Guard } from "./guard";
import { identityActionLease } from "./identity-action-lease";
import * as journal from "./journal";
import { primaryChange, savePrimary, userFromRow } from "./users";

/** Faults a lab injects into the switch under the lease (pauses, crashes, failing releases, …). */
export interface SwitchFaultHooks extends LeaseHooks {
  /**
   * Runs after the last ownership check, right before the save statement is sent: a pause here is one
   * that no check can catch, only the save's own condition.
   */
  beforeSave?(): Promise<void>;
  /** True: the saves without the lease's condition (what a save that trusts the checks before it does). */
  unfencedSave?: boolean;
}

export interface LeaseGuardOptions {
  ttlMs: number;
  /** Deadline, renewal, ownership checks and the in-flight rule; off, the textbook lease (the TTL alone). */
  safeguards: boolean;
  /** The provider's limit: a request it has not applied this long after it arrived is never applied. */
  applyLimitMs: number;
  /** Whether the provider refuses a write whose fencing token is older than one it has seen. */
  providerFences: boolean;
  /** Faults injected from outside (the lab), e.g. a pause or failing releases. */
  hooks?: SwitchFaultHooks;
  /** Hears every event of the lease (the lab's timeline). */
  onEvent?(event: LeaseEvent): void | Promise<void>;
}

/** The checkpoint before the irreversible step that follows each journal step. */
const nextStepAfter: Partial<Record<JournalStep, string>> = { acquired: "unlink", unlinked: "link", linked: "save" };

export function leaseGuard({
  ttlMs,
  safeguards,
  applyLimitMs,
  providerFences,
  hooks,
  onEvent,
}: LeaseGuardOptions): Guard {
  // With the safeguards, a call is sent only inside the lease: its bound follows the lease's expiry. The
  // textbook's calls are bounded by their own timeout only, counted from the acquisition.
  // The textbook lease saves as it was taught, unconditionally; so does the lab's `unfencedSave` fault.
  const unfencedSave = !safeguards || hooks?.unfencedSave === true;
  const bound = safeguards
    ? { boundMs: applyLimitMs, followsLease: true }
    : { boundMs: textbookTimeoutMs + applyLimitMs, followsLease: false };
  return {
    async run({ db, userId, operationId, targetIdentityId }, body) {
      const narrate = async (event: LeaseEvent) => {
        await onEvent?.(event);
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
      const options = {
        db,
        ttlMs,
        intent: journal.intentRecorder(operationId, targetIdentityId, bound),
        onExtend: journal.boundFollowsLease(userId, operationId, applyLimitMs),
        onEvent: narrate,
      };
      try {
        return await withLeaseForTeaching(
          identityActionLease,
          userId,
          options,
          { safeguards, hooks },
          async (section) => {
            const journalId = section.intentId!;
            const { lease } = section;
            const acquiredUser = userFromRow(section.row);
            // The primary the intent recorded as the switch's starting point.
            let journaledFrom = acquiredUser.primaryIdentityId;
            let finished = false;
            const leftovers = await journal.openEntries(db, userId, journalId);
            for (const entry of leftovers.filter((each) => each.endedWith === null)) {
              await recordEvent(db, {
                userId,
                operationId,
                kind: "lease-taken-over",
                message:
                  `The lease of operation ${shortId(entry.operationId)} (token ${entry.fence}) ` +
                  `expired unreleased and was taken over by operation ${shortId(operationId)} (token ` +
                  `${lease.fence}).`,
              });
            }
            let outcomeUnknown = false;
            // Whether this operation may have sent a provider write: until then, a failure leaves nothing to settle.
            let writesBegun = false;
            const lostUnlessSaved = (saved: boolean, step: string) => {
              if (!saved) throw new LeaseLost(step);
            };
            try {
              const result = await body({
                db,
                deadline: section.deadline,
                fence: lease.fence,
                generation: lease.generation,
                savePrimary: async (primaryIdentityId, saveOptions) => {
                  if (!saveOptions?.finishing)
                    return unfencedSave
                      ? void (await savePrimary(db, userId, primaryIdentityId))
                      : lostUnlessSaved(await lease.update(primaryChange(primaryIdentityId)), "recover");
                  await hooks?.beforeSave?.();
                  const saved = unfencedSave
                    ? await journal.saveUnfencedAndFinish(db, journalId, userId, primaryIdentityId)
                    : await journal.saveAndFinish(db, journalId, lease, primaryIdentityId);
                  lostUnlessSaved(saved, "save");
                  finished = true;
                },
                // A recovery may have changed the user since the acquiring statement read it.
                acquiredUser: leftovers.length === 0 ? acquiredUser : undefined,
                leftovers,
                markRecovered: async (entry, message) => {
                  await journal.resolve(db, entry.id, operationId);
                  await recordEvent(db, { userId, operationId, kind: "recovered", message });
                },
                reached: async (step, fromIdentityId) => {
                  // The intent is `acquired` from the same starting point: nothing to write. The lease is then
                  // known to be mine from the acquisition's own answer (the deadline's remaining time), as long
                  // as only the lease writes its columns: the lab's `lockColumnMapped` rename, which wipes them
                  // on purpose, is caught at the next owner-checked write instead of before the unlink.
                  const unchanged = step === "acquired" && fromIdentityId === journaledFrom;
                  const record = unchanged
                    ? async () => true
                    : () => journal.advance(db, journalId, lease, step, fromIdentityId);
                  if (fromIdentityId !== undefined) journaledFrom = fromIdentityId;
                  const next = nextStepAfter[step];
                  if (next) await section.checkpoint(next, record);
                  else await record();
                  if (step === "acquired") writesBegun = true;
                },
                ensureHeld: async (nextStep) => {
                  await section.checkpoint(nextStep);
                  writesBegun = true;
                },
                callMayStillLand: () => {
                  outcomeUnknown = true;
                  // Without fencing, only time makes a lost write harmless: hold the lease until it cannot land.
                  if (safeguards && !providerFences)
                    section.keepFor(applyLimitMs, "a provider call's outcome is unknown");
                },
                settleInFlight: async (entry) => {
                  // The textbook lease trusts its TTL; a provider that fences is read with the newer token.
                  if (!safeguards || providerFences || entry.inFlightForMs === 0) return;
                  if (entry.inFlightForMs < section.deadline.remainingMs())
                    return void (await pause(entry.inFlightForMs));
                  throw new OperationInProgress(
                    entry.inFlightUntil,
                    entry.inFlightForMs,
                    `A provider call of operation ${shortId(entry.operationId)} may still land until ` +
                      `${entry.inFlightUntil?.toISOString()}: nothing can be read safely before then.`,
                  );
                },
              });
              // No separate `saved` step: the save and `done` are one write (`finishing`), or nothing was saved.
              if (!finished) await journal.advance(db, journalId, lease, "done");
              return result;
            } catch (error) {
              if (error instanceof WorkCrashed) throw error; // a dead process writes nothing more
              const endedWith = error instanceof Error ? error.message : String(error);
              const ended =
                writesBegun || outcomeUnknown
                  ? journal.endUnfinished(db, journalId, endedWith, outcomeUnknown ? applyLimitMs : null)
                  : journal.discard(db, journalId);
              await ended.catch(() => undefined);
              if (error instanceof LeaseLostError || error instanceof LeaseLost) {
                const detail =
                  error instanceof LeaseLost ? error.detail : new LeaseLost(error.beforeStep ?? "next").detail;
                const message = `Operation ${shortId(operationId)} lost its lease: ${detail}`;
                await recordEvent(db, { userId, operationId, kind: "lease-lost", message });
              }
              if (error instanceof FencedOff) {
                const message = `Fenced call refused: operation ${shortId(operationId)} (token ${lease.fence}). ${error.detail}`;
                await recordEvent(db, { userId, operationId, kind: "fenced", message });
              }
              throw error;
            }
          },
        );
      } catch (error) {
        if (error instanceof LeaseUnavailable) {
          throw error.reason === "not-found"
            ? new UserNotFound(userId)
            : new OperationInProgress(error.heldUntil, error.remainingMs);
        }
        if (error instanceof LeaseLostError) throw new LeaseLost(error.beforeStep ?? "next");
        if (error instanceof WorkCrashed)
          throw new OperationCrashed(`Operation ${shortId(operationId)} ${error.message}`);
        throw error;
      }
    },
  };
}
