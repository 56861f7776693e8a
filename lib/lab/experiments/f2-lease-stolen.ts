import { ada, appliedWrites, fact, slowSwitchCalls } from "./lab";
import type { Experiment } from "./types";

export const leaseStolen: Experiment = {
  id: "f2-lease-stolen",
  title: "A lease stolen from a slow but live operation",
  question: "What happens when the holder is only slow (a GC pause), not dead, and its lease runs out?",
  failureMode: "Lease stolen: the TTL passes while the holder still works, a second one takes the lease",
  expected:
    "Textbook lease (safeguards off): the first switch pauses past its TTL, a second switch takes the lease over, both make provider calls, and the audit names the corruption.",
  tryNext:
    "On the main page, arm a pause after acquire longer than the TTL with the safeguards off, click twice; then turn the safeguards on and do it again.",
  async run(lab) {
    const ttlMs = 1_000;
    await lab.fresh({
      leaseTtlMs: ttlMs,
      leaseSafeguards: false,
      provider: slowSwitchCalls(400),
      faults: { stall: { at: "acquired", ms: 1_200 } },
    });
    const start = lab.sinceStart();
    const first = lab.switchTo(ada.github, "first switch (pauses 1.2 s after acquiring)");
    await lab.at(start + 1_050);
    const second = await lab.switchTo(ada.email, "second switch (after the TTL)");
    const slow = await first;
    const [audit, calls] = await Promise.all([lab.audit(), lab.calls()]);
    const writes = { first: appliedWrites(calls, slow.operationId), second: appliedWrites(calls, second.operationId) };
    const asExpected = writes.first > 0 && writes.second > 0 && !audit.consistent;
    return {
      observed: {
        ttlMs,
        pauseMs: 1_200,
        first: fact(slow),
        second: fact(second),
        providerWritesApplied: writes,
        auditConsistent: audit.consistent,
        violations: audit.violations,
      },
      asExpected,
      explanation: asExpected
        ? `The first switch paused 1,200 ms with a ${ttlMs} ms lease. At ${second.startedMs} ms the lease had expired, so the second switch took it over and changed the provider (${writes.second} writes). The first one never checked its lease: it woke up and made its calls too (${writes.first} applied), from a primary it had read before the pause. The provider ended split: ${audit.violations.join("; ")}. A lease alone cannot stop a holder that does not know it lost it: it needs a deadline and a check before each step (the safeguards), or fencing tokens.`
        : `Expected both switches to change the provider and the audit to fail; measured writes ${JSON.stringify(writes)} and an audit that is ${audit.consistent ? "consistent" : "inconsistent"}.`,
    };
  },
};
