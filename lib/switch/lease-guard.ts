/**
 * The product's guard: the lease stored as data on the user row (one UPDATE to acquire, one to release,
 * no connection held in between), with the switch's intent journaled by the acquiring statement itself.
 */
import type { JournalStep } from "../../db/schema";
import { FencedOff, LeaseLost, OperationInProgress, UserNotFound } from "../core/problems";
import { LeaseLostError, LeaseUnavailable, withLease, type LeaseEvent, type LeaseHooks } from "../lease";
import { recordEvent, shortId } from "./events";
import type { Guard } from "./guard";
import { identityActionLease } from "./identity-action-lease";
import * as journal from "./journal";
import { saveUser } from "./users";

export interface LeaseGuardOptions {
  ttlMs: number;
  /** Deadline, renewal and ownership checks; off, the textbook lease (the TTL alone). */
  safeguards: boolean;
  /** Faults injected from outside (the lab), e.g. a pause or failing releases. */
  hooks?: LeaseHooks;
}

/** The checkpoint before the irreversible step that follows each journal step. */
const nextStepAfter: Partial<Record<JournalStep, string>> = { acquired: "unlink", unlinked: "link", linked: "save" };

export function leaseGuard({ ttlMs, safeguards, hooks }: LeaseGuardOptions): Guard {
  return {
    async run({ db, userId, operationId, targetIdentityId }, body) {
      const narrate = async (event: LeaseEvent) => {
        if (event.kind !== "release-failed") return;
        const last = event.attempt >= event.attempts;
        console.error(
          `[lease] release of ${userId}'s lease failed (attempt ${event.attempt} of ${event.attempts}):`,
          event.error,
        );
        await recordEvent(db, {
          userId,
          operationId,
          kind: "release-failed",
          message: `Releasing operation ${shortId(operationId)}'s lease failed (attempt ${event.attempt} of ${event.attempts}): ${
            last ? "the TTL will free it." : "retrying in the background."
          }`,
        });
      };
      const options = {
        db,
        ttlMs,
        safeguards,
        hooks,
        intent: journal.intentRecorder(operationId, targetIdentityId),
        onEvent: narrate,
      };
      try {
        return await withLease(identityActionLease, userId, options, async (section) => {
          const journalId = section.intentId!;
          const fence = section.lease.fence;
          const leftovers = await journal.openEntries(db, userId, journalId);
          for (const entry of leftovers.filter((each) => each.endedWith === null)) {
            await recordEvent(db, {
              userId,
              operationId,
              kind: "lease-taken-over",
              message: `The lease of operation ${shortId(entry.operationId)} (token ${entry.fence}) expired unreleased and was taken over by operation ${shortId(operationId)} (token ${fence}).`,
            });
          }
          try {
            const result = await body({
              db,
              deadline: section.deadline,
              fence,
              savePrimary: async (user, primaryIdentityId) => void (await saveUser(db, { ...user, primaryIdentityId })),
              leftovers,
              markRecovered: async (entry, message) => {
                await journal.resolve(db, entry.id, operationId);
                await recordEvent(db, { userId, operationId, kind: "recovered", message });
              },
              reached: async (step, fromIdentityId) => {
                await journal.advance(db, journalId, step, fromIdentityId);
                const next = nextStepAfter[step];
                if (next) await section.checkpoint(next);
              },
            });
            await journal.advance(db, journalId, "done");
            return result;
          } catch (error) {
            await journal
              .endUnfinished(db, journalId, error instanceof Error ? error.message : String(error))
              .catch(() => undefined);
            if (error instanceof LeaseLostError || error instanceof LeaseLost) {
              const detail =
                error instanceof LeaseLost ? error.detail : new LeaseLost(error.beforeStep ?? "next").detail;
              await recordEvent(db, {
                userId,
                operationId,
                kind: "lease-lost",
                message: `Operation ${shortId(operationId)} lost its lease: ${detail}`,
              });
            }
            if (error instanceof FencedOff) {
              await recordEvent(db, {
                userId,
                operationId,
                kind: "fenced",
                message: `Fenced call refused: operation ${shortId(operationId)} (token ${fence}). ${error.detail}`,
              });
            }
            throw error;
          }
        });
      } catch (error) {
        if (error instanceof LeaseUnavailable)
          throw error.reason === "not-found"
            ? new UserNotFound(userId)
            : new OperationInProgress(error.heldUntil, error.remainingMs);
        if (error instanceof LeaseLostError) throw new LeaseLost(error.beforeStep ?? "next");
        throw error;
      }
    },
  };
}
