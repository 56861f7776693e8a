import { ada, appliedWrites, fact, slowSwitchCalls, type Lab } from "./lab";
import type { Experiment } from "./types";

/** A rename that read ada before a switch took the lease saves while the switch runs; a second switch follows. */
async function renameDuringSwitch(lab: Lab, lockColumnMapped: boolean) {
  // Textbook lease (no renewal): what the save does to the lease row is then all that decides.
  await lab.fresh({
    lockColumnMapped,
    leaseSafeguards: false,
    provider: { ...slowSwitchCalls(800), latencyMs: 200 },
  });
  const start = lab.sinceStart();
  const renaming = lab.rename("Augusta Ada King", `rename (lock column ${lockColumnMapped ? "mapped" : "unmapped"})`);
  await lab.at(start + 50);
  const first = lab.switchTo(ada.github, "first switch");
  const renamed = await renaming;
  const leaseAfterRename = await lab.lease();
  const readAt = new Date();
  await lab.at(renamed.endedMs + 100);
  const second = await lab.switchTo(ada.email, "second switch, after the rename saved");
  const done = await first;
  lab.mark(
    done.operationId,
    leaseAfterRename.held ? "its lease is still held once the rename saved" : "its lease is gone once the rename saved",
    readAt,
  );
  const [audit, calls] = await Promise.all([lab.audit(), lab.calls()]);
  const callsOf = (operationId: string) => calls.filter((call) => call.operationId === operationId);
  // A call is logged when it ends: it started `durationMs` before `at`.
  const secondStarted = callsOf(second.operationId).map((call) => Date.parse(call.at) - call.durationMs);
  const firstEnded = callsOf(done.operationId).map((call) => Date.parse(call.at));
  return {
    lockColumnMapped,
    rename: fact(renamed),
    leaseHeldAfterRename: leaseAfterRename.held,
    first: fact(done),
    second: fact(second),
    secondCalledProviderWhileFirstDid: secondStarted.length > 0 && Math.min(...secondStarted) < Math.max(...firstEnded),
    providerWritesApplied: {
      first: appliedWrites(calls, done.operationId),
      second: appliedWrites(calls, second.operationId),
    },
    auditConsistent: audit.consistent,
    violations: audit.violations,
  };
}

export const lockColumnMapped: Experiment = {
  id: "q4-lock-column-mapped",
  title: "The lock column mapped as an entity field",
  question:
    "Why must the lease's columns stay out of the entity? What does a rename saved from a stale copy do to a running switch?",
  failureMode: null,
  expected:
    "Mapped: the rename's save writes the lock columns back from its stale copy, the lease vanishes, and a second switch gets " +
    "in while the first still calls the provider, which their calls then corrupt unless they happen to interleave harmlessly. " +
    "Unmapped (the default): the same rename leaves the lease alone, the second switch is refused.",
  tryNext:
    "In the lab controls, tick “Lock column mapped” and untick “Lease safeguards”; click Make primary and, while it " +
    "runs, rename yourself (the Display name form); then click Make primary again.",
  async run(lab) {
    const mapped = await renameDuringSwitch(lab, true);
    const unmapped = await renameDuringSwitch(lab, false);
    // Mapped, the lease is gone and a second switch gets in while the first still calls the provider. Whether
    // their calls then corrupt the provider depends on how they interleave (the second first settles what the
    // first's journal entry shows): the audit is reported as measured, not required.
    const asExpected =
      !mapped.leaseHeldAfterRename &&
      mapped.second.status !== 409 &&
      mapped.secondCalledProviderWhileFirstDid &&
      unmapped.leaseHeldAfterRename &&
      unmapped.second.status === 409 &&
      unmapped.auditConsistent;
    return {
      observed: { mapped, unmapped },
      asExpected,
      explanation: asExpected
        ? `The rename read ada before the first switch took the lease, spent ${mapped.rename.endedMs - mapped.rename.startedMs} ` +
          `ms at the provider, then saved its copy. With the lock columns mapped, that save wrote them back as they were read ` +
          `(empty): the running switch's lease vanished, and the second switch acquired it at once and called the provider ` +
          `while the first still did (${mapped.providerWritesApplied.first} and ${mapped.providerWritesApplied.second} writes ` +
          `applied). ` +
          (mapped.auditConsistent
            ? "The audit is consistent this time: their calls happened to interleave harmlessly " +
              `(the second answered ${mapped.second.status}). `
            : `The provider ended split: ${mapped.violations.join("; ")}. `) +
          `Unmapped, the save named only the user's own columns: the lease stayed, the second switch got ` +
          `${unmapped.second.status}, and the audit is consistent. Only the lease lock may write its columns.`
        : `Expected the mapped lock columns to be wiped by the rename's whole-row save, and the unmapped ones to survive it. ` +
          `Measured, mapped: after the rename the lease was ${mapped.leaseHeldAfterRename ? "still held" : "gone"}, the second ` +
          `switch answered ${mapped.second.status} and ` +
          (mapped.secondCalledProviderWhileFirstDid
            ? "called the provider while the first still did, "
            : "did not call the provider while the first did, ") +
          `and the audit is ${mapped.auditConsistent ? "consistent" : "inconsistent"}. Unmapped: the lease was ` +
          `${unmapped.leaseHeldAfterRename ? "still held" : "gone"}, the second switch answered ${unmapped.second.status}, and ` +
          `the audit is ${unmapped.auditConsistent ? "consistent" : "inconsistent"}.`,
    };
  },
};
