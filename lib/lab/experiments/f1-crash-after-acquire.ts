import { setTimeout as pause } from "node:timers/promises";
import { sql } from "kysely";
import { ada, fact, slowSwitchCalls } from "./lab";
import type { Experiment } from "./types";

export const crashAfterAcquire: Experiment = {
  id: "f1-crash-after-acquire",
  title: "The holder crashes right after acquiring",
  question: "What if the process dies holding the lease: no finally, no release, no renewal?",
  failureMode: "Crash after acquire: the lease is never released",
  expected:
    "The crashed switch stops dead; the lease stays (not renewed) until its TTL, " +
    "refusing others meanwhile; then the next switch takes it over and recovers the half-done switch " +
    "from the journal.",
  tryNext:
    "In the lab controls, set “Crash the next operation” to after the unlink and click Make primary; then watch the " +
    "next click finish the half-done switch.",
  async run(lab) {
    const ttlMs = 1_500;
    // The provider enforces fencing tokens: the next holder's fenced read shuts out any call the dead one
    // might have left in flight, so it need not wait for the provider's apply limit as well.
    // The next switch is the one that recovers: the background reconciler is off, as on a loaded machine
    // it could become eligible (the entry quiet for its 3 s) before the next switch arrives.
    await lab.fresh({
      leaseTtlMs: ttlMs,
      provider: { ...slowSwitchCalls(200), enforceFencing: true },
      faults: { crash: "after-acquire" },
      reconcileAfterMs: null,
    });
    const crashed = await lab.switchTo(ada.github, "switch that crashes after acquiring");
    const leaseAfterCrash = await lab.lease();
    const refused = await lab.switchTo(ada.email, "switch while the dead holder's lease lasts");
    // A live holder renews every TTL/3; a dead one does not, so the expiry must not move.
    await pause(ttlMs / 2);
    const leaseLater = await lab.lease();
    await lab.leaseFreeAfter(ttlMs * 2);
    const lockedOutMs = lab.sinceStart() - crashed.endedMs;
    const next = await lab.switchTo(ada.email, "next switch, after the TTL");
    const journal = await sql<{ step: string; resolved_by: string | null }>`
      SELECT step, resolved_by FROM switch_journal WHERE operation_id = ${crashed.operationId}`.execute(lab.db);
    const entry = journal.rows[0];
    const audit = await lab.audit();
    const renewed = leaseLater.expiresAt?.getTime() !== leaseAfterCrash.expiresAt?.getTime();
    const asExpected =
      crashed.problemType === "operation-crashed" &&
      leaseAfterCrash.held &&
      !renewed &&
      refused.status === 409 &&
      next.status === 200 &&
      entry?.resolved_by === next.operationId &&
      audit.consistent;
    return {
      observed: {
        ttlMs,
        crashed: fact(crashed),
        leaseHeldAfterCrash: leaseAfterCrash.held,
        leaseRenewedAfterCrash: renewed,
        refusedMeanwhile: fact(refused),
        lockedOutMs: Math.round(lockedOutMs),
        next: fact(next),
        crashedJournalStep: entry?.step ?? null,
        recoveredBy: entry?.resolved_by ?? null,
        auditConsistent: audit.consistent,
      },
      asExpected,
      explanation: asExpected
        ? `The first switch acquired the lease and its process "died" right after (the lab's crash fault): ` +
          "no finally ran, so nothing released the lease, and nothing renewed it either (its expiry did " +
          `not move in ${ttlMs / 2} ms). A switch in the meantime got 409. ` +
          `After about ${Math.round(lockedOutMs)} ms the lease expired by itself; ` +
          `the next switch took it over, found the crashed switch in the journal at step "${entry?.step}", ` +
          "settled it against the provider, then did its own work. The audit is consistent. " +
          "The TTL is what turns a crash into a wait instead of a permanent lock."
        : "Expected a crash answer, a held but unrenewed lease, a 409 meanwhile, " +
          "then a 200 that recovers the journal entry. Measured: the crashed switch answered " +
          `${crashed.status}, the switch meanwhile ${refused.status}, and the next one ${next.status}. ` +
          `The lease was ${renewed ? "renewed after the crash" : "not renewed after the crash"}, ` +
          "and the journal entry was " +
          `${entry?.resolved_by ? `recovered by ${entry.resolved_by}` : "recovered by nobody"}.`,
    };
  },
};
