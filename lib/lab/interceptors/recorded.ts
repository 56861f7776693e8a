/**
 * The switch's collaborators, recorded on the operation's timeline lane: each provider call a phase, the
 * lease's events (acquisition, renewals, release), and the guard's run (take-over, save, release, a crash).
 */
import type { RunUnderLease } from "@lease-lock-lab/lease";
import { ProviderCallError, type IdentityProviderClient } from "../../provider/client";
import { shortId } from "../../switch/events";
import type { Guard, GuardedSection } from "../../switch/guard";
import { DiedDuringCall } from "./crash-during-call";
import type { PhaseName, PhaseOutcome } from "../lane";
import { errorText, type OperationRecorder, type PhaseRecorder } from "../lane-recorder";

/** A provider call's failure in the provider log's words: its status, or what happened instead. */
function callOutcome(error: unknown): PhaseOutcome {
  // The process died with the call at the provider: the caller closed it, unanswered.
  if (error instanceof DiedDuringCall) return "client-closed";
  if (!(error instanceof ProviderCallError)) return "failed";
  if (error.errorCode === "fenced_token") return "fenced";
  if (error.kind === "deadline") return "timeout";
  if (error.kind === "network") return "network-error";
  return error.status === null ? "failed" : `${error.status}`;
}

async function timed<T>(
  recorder: PhaseRecorder,
  name: PhaseName,
  detail: string,
  accounts: string[],
  success: PhaseOutcome,
  work: () => Promise<T>,
): Promise<T> {
  const end = recorder.start(name, detail, accounts);
  try {
    const result = await work();
    end(success);
    return result;
  } catch (error) {
    const attempts = error instanceof ProviderCallError || error instanceof DiedDuringCall ? error.attempts : undefined;
    end(callOutcome(error), `${detail}: ${errorText(error)}`, { attempts });
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

/** A way of running work under a lease whose events (acquired, renewed, released, …) the lane hears too. */
export const recordingLease =
  (run: RunUnderLease, recorder: OperationRecorder): RunUnderLease =>
  (lock, rowId, options, work) =>
    run(
      lock,
      rowId,
      {
        ...options,
        onEvent: async (event) => {
          await recorder.leaseEvent(event);
          await options.onEvent?.(event);
        },
      },
      work,
    );

/**
 * A guard whose run is recorded: the lane learns the operation's id, the save is a phase, and for the
 * lease (`leased`) the acquisition, a take-over and the release are phases too. After a crash (the lab's
 * fault, lib/lab/interceptors/step-faults.ts) no release follows: a dead process releases nothing.
 */
export function recordedGuard(guard: Guard, recorder: OperationRecorder, leased: boolean): Guard {
  return {
    checksRequirements: guard.checksRequirements,
    run: (request, body) => {
      recorder.bind(request.operationId);
      // A guard that checks the requirement itself does so as it takes hold: the lease's events admit it.
      if (!guard.checksRequirements) recorder.admit();
      if (leased) recorder.acquiring();
      return guard.run(request, async (section) => {
        recorder.tookOver(section.leftovers);
        try {
          return await body({
            ...section,
            savePrimary: recordedSave(section.savePrimary, recorder),
            settleInFlight: recordedSettling(section, recorder),
          });
        } finally {
          // The body ended (a crash never ends it): the lease is released, or kept, next.
          if (leased) recorder.releasing();
        }
      });
    },
  };
}

const recordedSave =
  (save: GuardedSection["savePrimary"], recorder: OperationRecorder): GuardedSection["savePrimary"] =>
  async (primaryIdentityId, options) => {
    const end = recorder.start("save", `primary ${primaryIdentityId}`);
    try {
      await save(primaryIdentityId, options);
      end("saved");
    } catch (error) {
      end("failed", errorText(error));
      throw error;
    }
  };

/**
 * A recovery's wait for the earlier switch's calls to stop being able to land (the provider's apply limit past its
 * lease), a phase: without it the lane showed nothing between the take-over and the recovery's reads, for seconds.
 */
const recordedSettling =
  (section: GuardedSection, recorder: OperationRecorder): GuardedSection["settleInFlight"] =>
  async (entry) => {
    if (section.inFlightWaitMs(entry) === 0) return section.settleInFlight(entry);
    const until = entry.inFlightUntil ? ` until ${entry.inFlightUntil.toISOString()}` : "";
    const detail = `for operation ${shortId(entry.operationId)}'s calls, which may land at the provider${until}`;
    const end = recorder.start("waiting", detail);
    try {
      await section.settleInFlight(entry);
      end("settled");
    } catch (error) {
      end("failed", errorText(error));
      throw error;
    }
  };
