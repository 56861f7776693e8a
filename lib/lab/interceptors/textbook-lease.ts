/**
 * The textbook lease, as the lab shows it when the safeguards are off: acquire, do the work, release in
 * `finally`. Nothing bounds the work by the lease (its calls get a generous timeout of their own), nothing
 * renews it, no checkpoint asks whether it is still mine, the saves trust it, and a release that fails is
 * the caller's error. It stands in for `withLease` under the product's lease guard, with the journal's
 * saves unfenced, so the switch's steps are the same and only the lease differs.
 */
import { Deadline, LeaseUnavailable, type LeaseHandle, type RunUnderLease } from "@lease-lock-lab/lease";
import { switchJournal, timeoutBoundRecording, type SwitchJournal } from "../../switch/journal";
import { unfencedSaves } from "./unfenced-saves";

/** The only bound on the textbook's calls: the TTL is trusted to be long enough. */
export const textbookTimeoutMs = 60_000;

export const textbookLease: RunUnderLease = async (lock, rowId, options, work) => {
  const { db, ttlMs, onEvent = () => undefined } = options;
  const { intent, requires, also, values } = options;
  const acquisition = await lock.acquire(db, rowId, { ttlMs, intent, requires, also, values });
  if (!acquisition.acquired) {
    if (acquisition.reason !== "held") throw new LeaseUnavailable(acquisition.reason);
    await onEvent({ kind: "refused", heldUntil: acquisition.heldUntil });
    throw new LeaseUnavailable("held", acquisition.heldUntil, acquisition.remainingMs);
  }
  const lease = acquisition.lease as LeaseHandle;
  await onEvent({ kind: "acquired", lease });
  const deadline = new Deadline(textbookTimeoutMs);
  let released = false;
  const outcome = await work({
    lease: acquisition.lease,
    intentId: acquisition.intentId,
    row: acquisition.row,
    also: acquisition.also,
    deadline,
    // Never asks whether the lease is still mine: it writes the step and carries on, whatever the answer.
    checkpoint: async (_write, record) => void (await record?.()),
    // Releases at the end whatever may still be in flight: the TTL is trusted.
    keepFor: () => undefined,
    releaseWith: async (write) => {
      released = await write();
      if (released) await onEvent({ kind: "released" });
      return released;
    },
  }).then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  deadline.dispose();
  if (released) return settled(outcome);
  try {
    await onEvent({ kind: (await lease.release()) ? "released" : "release-found-nothing" });
  } catch (error) {
    // The textbook's flaw, kept: a release that throws replaces the work's result with its error.
    await onEvent({ kind: "release-failed", attempt: 1, attempts: 1, error });
    throw error;
  }
  return settled(outcome);
};

function settled<T>(outcome: { value: T } | { error: unknown }): T {
  if ("error" in outcome) throw outcome.error;
  return outcome.value;
}

/**
 * The journal as the textbook's switch writes it: its calls may land until their own timeout (plus the
 * provider's limit) from the acquisition, it never asks whether an earlier holder's call may still land
 * (it trusts the TTL), and its saves trust the lease.
 */
export const textbookJournal: SwitchJournal = {
  ...unfencedSaves(switchJournal),
  recording: timeoutBoundRecording(textbookTimeoutMs),
  leftoversFrom: (rows) => switchJournal.leftoversFrom(rows).map((entry) => ({ ...entry, inFlightForMs: 0 })),
};
