import { findUser } from "../../switch/users";
import { ada, appliedWrites, fact, slowSwitchCalls, type Lab } from "./lab";
import type { Experiment } from "./types";

const ttlMs = 1_000;

/** The textbook lease: the first switch pauses past its TTL after acquiring, a second takes the lease over. */
async function textbook(lab: Lab) {
  const pauseMs = 1_200;
  await lab.fresh({
    leaseTtlMs: ttlMs,
    leaseSafeguards: false,
    provider: slowSwitchCalls(400),
    faults: { stall: { at: "acquired", ms: pauseMs } },
  });
  const first = lab.switchTo(ada.github, `first switch (pauses ${pauseMs} ms after acquiring)`);
  // The second switch comes once the first's stored expiry has passed.
  await lab.leaseTaken(ttlMs);
  await lab.leaseFreeAfter(ttlMs * 3);
  const second = await lab.switchTo(ada.email, "second switch (after the TTL)");
  const slow = await first;
  const [audit, calls] = await Promise.all([lab.audit(), lab.calls()]);
  return {
    pauseMs,
    first: fact(slow),
    second: fact(second),
    providerWritesApplied: {
      first: appliedWrites(calls, slow.operationId),
      second: appliedWrites(calls, second.operationId),
    },
    auditConsistent: audit.consistent,
    violations: audit.violations,
  };
}

/**
 * With the safeguards, paused at the worst place: after the last ownership check, right before the save
 * statement is sent, and longer than renewals may hold the lease (3 × TTL). No check can catch that pause;
 * the save's own condition does. The provider enforces fencing: the paused switch's link was answered, but
 * its journal entry cannot say so before its save (that statement records it), so without fencing the next
 * holder would have to wait out the apply limit before trusting what it reads; a fenced read need not.
 */
async function pausedAtSave(lab: Lab) {
  const pauseMs = 5 * ttlMs;
  await lab.fresh({
    leaseTtlMs: ttlMs,
    leaseSafeguards: true,
    provider: { ...slowSwitchCalls(300), enforceFencing: true },
    faults: { stall: { at: "save", ms: pauseMs } },
  });
  const first = lab.switchTo(ada.github, `first switch (pauses ${pauseMs} ms right before its save)`);
  // Renewals stop at the hold cap; the second switch comes once the lease has expired.
  await lab.leaseTaken(ttlMs);
  await lab.leaseFreeAfter(pauseMs);
  // How long it held, as the row says: an expired lease keeps its columns until it is taken over.
  const expired = await lab.lease();
  const heldMs =
    expired.lockedAt && expired.expiresAt && !expired.held
      ? expired.expiresAt.getTime() - expired.lockedAt.getTime()
      : null;
  const second = await lab.switchTo(ada.email, "second switch (takes the expired lease over)");
  const paused = await first;
  const [audit, calls, user] = await Promise.all([lab.audit(), lab.calls(), findUser(lab.db, ada.userId)]);
  return {
    pauseMs,
    holdCapMs: 3 * ttlMs,
    leaseHeldMs: heldMs,
    first: fact(paused),
    second: fact(second),
    providerWritesApplied: {
      first: appliedWrites(calls, paused.operationId),
      second: appliedWrites(calls, second.operationId),
    },
    localPrimary: user?.primaryIdentityId ?? null,
    auditConsistent: audit.consistent,
    violations: audit.violations,
  };
}

export const leaseStolen: Experiment = {
  id: "f2-lease-stolen",
  title: "A lease stolen from a slow but live operation",
  question: "What happens when the holder is only slow (a GC pause), not dead, and its lease runs out?",
  failureMode: "Lease stolen: the TTL passes while the holder still works, a second one takes the lease",
  expected:
    "Textbook lease (safeguards off): the first switch pauses past its TTL, " +
    "a second switch takes the lease over, both make provider calls, " +
    "and the audit names the corruption. With the safeguards, a pause right before the save, " +
    "past the hold cap: the second switch takes over and finishes, the first one's save carries the " +
    "lease's condition and changes nothing (409 lease-lost), and the audit is consistent.",
  tryNext:
    "On the main page, arm a pause after acquire longer than the TTL with the safeguards off, " +
    "click twice; then turn the safeguards on, arm a pause right before the save longer than 3 × " +
    "TTL, and click twice again.",
  async run(lab) {
    const stolen = await textbook(lab);
    const fenced = await pausedAtSave(lab);
    const asExpected =
      stolen.providerWritesApplied.first > 0 &&
      stolen.providerWritesApplied.second > 0 &&
      !stolen.auditConsistent &&
      fenced.leaseHeldMs !== null &&
      fenced.leaseHeldMs <= fenced.holdCapMs &&
      fenced.first.status === 409 &&
      fenced.first.problemType === "lease-lost" &&
      fenced.second.status === 200 &&
      fenced.localPrimary === ada.email &&
      fenced.auditConsistent;
    return {
      observed: { ttlMs, textbook: stolen, pausedAtSave: fenced },
      asExpected,
      explanation: asExpected
        ? [
            `Textbook: the first switch paused ${stolen.pauseMs} ms with a ${ttlMs} ms lease. ` +
              "Once the lease had expired, the second switch took it over and changed the provider " +
              `(${stolen.providerWritesApplied.second} writes). The first one never checked its lease: ` +
              `it woke up and made its calls too (${stolen.providerWritesApplied.first} applied), ` +
              "from a primary it had read before the pause. The provider ended split: " +
              `${stolen.violations.join("; ")}.`,
            "With the safeguards, the first switch made both its calls, passed its last check, " +
              `and paused ${fenced.pauseMs} ms right before its save: no check comes after that point. ` +
              `Renewals stopped at the hold cap (${fenced.holdCapMs} ms): the lease expired ` +
              `${fenced.leaseHeldMs} ms after it was taken, and the second switch took it over: ` +
              "its reads carry a newer fencing token, so it need not wait for the first one's calls to stop " +
              "landing; it finished the first one's half-done switch from the journal, then made its own " +
              `(${fenced.second.status}).`,
            "The first switch woke and sent its save, but the save's WHERE carries the lease's token and " +
              `expiry: 0 rows, so it changed nothing and answered ${fenced.first.status} ` +
              `${fenced.first.problemType}. The local primary is the second switch's target ` +
              `(${fenced.localPrimary}) and the audit is consistent. Only a write that carries its own ` +
              "condition is safe from a pause.",
          ].join(" ")
        : "Expected the textbook variant to corrupt the provider, and the paused save to be refused. " +
          `Measured, textbook: the first switch got ${stolen.providerWritesApplied.first} provider writes ` +
          `applied and the second ${stolen.providerWritesApplied.second}, and the audit is ` +
          `${stolen.auditConsistent ? "consistent" : "inconsistent"}. Paused at the save: ` +
          "the first switch answered " +
          `${fenced.first.status}${fenced.first.problemType ? ` ${fenced.first.problemType}` : ""}, ` +
          `the second ${fenced.second.status}, the local primary is ${fenced.localPrimary ?? "none"}, ` +
          "and the audit is " +
          `${fenced.auditConsistent ? "consistent" : `inconsistent (${fenced.violations.join("; ")})`}.`,
    };
  },
};
