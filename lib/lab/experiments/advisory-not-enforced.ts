import { ada, appliedWrites, fact, slowSwitchCalls } from "./lab";
import type { Experiment } from "./types";

export const advisoryNotEnforced: Experiment = {
  id: "advisory-not-enforced",
  title: "A second code path ignores the lease",
  question: "Does the lease protect the user from every writer?",
  failureMode: "The lock is advisory: a writer that does not take it is not stopped",
  expected:
    "While a switch holds the lease, the support tool sets the primary directly: " +
    "nothing stops it, both change the provider, and the provider is corrupted.",
  tryNext: "Click Make primary and, while it runs, POST /api/lab/support/users/{id}/primary { identityId } with curl.",
  async run(lab) {
    await lab.fresh({ provider: slowSwitchCalls(400) });
    const switching = lab.switchTo(ada.github, "switch under the lease");
    await lab.leaseTaken(2_000);
    const leaseWhenSupportStarts = await lab.lease();
    const support = await lab.support(ada.email, "support tool (no lock)");
    const switched = await switching;
    const [audit, calls] = await Promise.all([lab.audit(), lab.calls()]);
    const writes = {
      switch: appliedWrites(calls, switched.operationId),
      support: appliedWrites(calls, support.operationId),
    };
    const asExpected = leaseWhenSupportStarts.held && writes.support > 0 && writes.switch > 0 && !audit.consistent;
    return {
      observed: {
        leaseHeldWhenSupportStarted: leaseWhenSupportStarts.held,
        switch: fact(switched),
        support: fact(support),
        providerWritesApplied: writes,
        auditConsistent: audit.consistent,
        violations: audit.violations,
      },
      asExpected,
      explanation: asExpected
        ? "The switch held ada's lease when the support tool started; the support tool never asked for it, " +
          `so it read the same primary and made its own calls (${writes.support} applied) ` +
          `between the switch's (${writes.switch} applied). The provider ended split: ` +
          `${audit.violations.join("; ")}. A lease stored as data is advisory: ` +
          "it only keeps apart the writers that take it. Every path that changes the user's links (support " +
          "tools, scripts, admin pages) must go through the lease."
        : "Expected the support tool to change the provider while the switch held the lease, " +
          "and the audit to fail. Measured: the lease was " +
          `${leaseWhenSupportStarts.held ? "held" : "not held"} when the support tool started; ` +
          `the support tool got ${writes.support} provider writes applied and the switch ${writes.switch}; ` +
          `the audit is ${audit.consistent ? "consistent" : "inconsistent"}.`,
    };
  },
};
