import { setTimeout as pause } from "node:timers/promises";
import { sql } from "kysely";
import { findUser } from "../../switch/users";
import { ada, fact, slowSwitchCalls, type Lab } from "./lab";
import type { Experiment } from "./types";

const ttlMs = 1_500;

/** The crashed switch's journal entry: the step it reached, and the operation that settled it (if one has). */
async function journalOf(lab: Lab, operationId: string) {
  const { rows } = await sql<{ step: string; resolved_by: string | null }>`
    SELECT step, resolved_by FROM switch_journal WHERE operation_id = ${operationId}`.execute(lab.db);
  return rows[0] ?? null;
}

/** The process dies right after acquiring; the next switch, after the TTL, recovers what it left. */
async function afterAcquire(lab: Lab) {
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
  // The step the crash left (a recovery marks the entry resolved).
  const leftAt = (await journalOf(lab, crashed.operationId))?.step ?? null;
  const leaseAfterCrash = await lab.lease();
  const refused = await lab.switchTo(ada.email, "switch while the dead holder's lease lasts");
  // A live holder renews every TTL/3; a dead one does not, so the expiry must not move.
  await pause(ttlMs / 2);
  const leaseLater = await lab.lease();
  await lab.leaseFreeAfter(ttlMs * 2);
  const lockedOutMs = lab.sinceStart() - crashed.endedMs;
  const next = await lab.switchTo(ada.email, "next switch, after the TTL");
  const entry = await journalOf(lab, crashed.operationId);
  const audit = await lab.audit();
  return {
    crashed: fact(crashed),
    leaseHeldAfterCrash: leaseAfterCrash.held,
    leaseRenewedAfterCrash: leaseLater.expiresAt?.getTime() !== leaseAfterCrash.expiresAt?.getTime(),
    refusedMeanwhile: fact(refused),
    lockedOutMs: Math.round(lockedOutMs),
    next: fact(next),
    crashedJournalStep: leftAt,
    recoveredBy: entry?.resolved_by ?? null,
    auditConsistent: audit.consistent,
  };
}

/**
 * The process dies with its link call at the provider, which applies it after its caller is gone; nobody
 * switches again: the background reconciler settles what the journal left, once the lease has expired (and,
 * without fencing, once the dead holder's calls can no longer land).
 */
async function duringLink(lab: Lab, enforceFencing: boolean) {
  const applyLimitMs = 1_000;
  await lab.fresh(
    {
      leaseTtlMs: ttlMs,
      reconcileAfterMs: 300,
      provider: { ...slowSwitchCalls(400), applyLimitMs, enforceFencing },
      faults: { crash: "during-link" },
    },
    `crash during the link, fencing ${enforceFencing ? "enforced" : "off"}`,
  );
  const crashed = await lab.switchTo(ada.github, "switch that dies during its link call");
  const leftAt = (await journalOf(lab, crashed.operationId))?.step ?? null;
  // Settled by the reconciler: the entry's lease expires, its calls' bound passes, then the round comes.
  const limitMs = 3 * ttlMs + applyLimitMs + 5_000;
  const since = lab.sinceStart();
  let entry = await journalOf(lab, crashed.operationId);
  while (!entry?.resolved_by && lab.sinceStart() - since < limitMs) {
    await pause(50);
    entry = await journalOf(lab, crashed.operationId);
  }
  if (entry?.resolved_by) lab.note(entry.resolved_by);
  // The repair's own operation ends after the entry is marked: the audit settles once it has.
  const auditLimit = lab.sinceStart() + 5_000;
  let audit = await lab.audit();
  while (!audit.settled && lab.sinceStart() < auditLimit) {
    await pause(50);
    audit = await lab.audit();
  }
  const [calls, user] = await Promise.all([lab.calls(), findUser(lab.db, ada.userId)]);
  const link = calls.find((call) => call.operationId === crashed.operationId && call.method === "POST");
  return {
    enforceFencing,
    crashed: fact(crashed),
    // The provider's own account of the link: applied (2xx) once its caller had gone.
    link: link ? { status: link.status, outcome: link.outcome } : null,
    crashedJournalStep: leftAt,
    settledBy: entry?.resolved_by ?? null,
    settledAfterMs: lab.sinceStart() - crashed.endedMs,
    localPrimary: user?.primaryIdentityId ?? null,
    auditSettled: audit.settled,
    auditConsistent: audit.consistent,
    violations: audit.violations,
  };
}

type DuringLink = Awaited<ReturnType<typeof duringLink>>;

const landedAndSettled = (variant: DuringLink): boolean =>
  variant.crashed.problemType === "operation-crashed" &&
  variant.crashedJournalStep === "unlinked" &&
  variant.link?.outcome === "client-closed" &&
  variant.link.status === 201 &&
  variant.settledBy !== null &&
  variant.settledBy !== variant.crashed.operationId &&
  variant.localPrimary === ada.github &&
  variant.auditSettled &&
  variant.auditConsistent;

function duringLinkWords(variant: DuringLink): string {
  const fencing = variant.enforceFencing
    ? "With fencing enforced, the reconciler took the lease as soon as it had expired: its reads carry a " +
      "newer token, and any later write of the dead holder would have been refused."
    : "Without fencing, the reconciler waited until the dead holder's calls could no longer land (its " +
      "lease's last expiry plus the provider's limit), as any reader must.";
  return (
    `Crash during the link, fencing ${variant.enforceFencing ? "enforced" : "off"}: the process died while ` +
    `its link call was at the provider. The provider applied it anyway (${variant.link?.status}, logged ` +
    `client-closed: its caller had gone). ${fencing} ${variant.settledAfterMs} ms after the crash the ` +
    `reconciler settled the journal entry left at "${variant.crashedJournalStep}": it read the provider, ` +
    `found the link done and saved the new primary (${variant.localPrimary}), with no further click. ` +
    "The audit is settled and consistent."
  );
}

/** What a crash during the link left, in the words of an unexpected verdict. */
function duringLinkMeasured(variant: DuringLink): string {
  const link = variant.link ? `${variant.link.status} ${variant.link.outcome ?? ""}` : "nothing";
  const audit = variant.auditConsistent ? "consistent" : `inconsistent (${variant.violations.join("; ")})`;
  return (
    `Crash during the link, fencing ${variant.enforceFencing ? "enforced" : "off"}: the crashed switch ` +
    `answered ${variant.crashed.status}; the provider logged its link as ${link}; the entry (step ` +
    `${variant.crashedJournalStep}) was ${variant.settledBy ? "settled" : "not settled"}; the local primary ` +
    `is ${variant.localPrimary}; the audit is ${variant.auditSettled ? "settled" : "not settled"} and ${audit}.`
  );
}

export const crashAfterAcquire: Experiment = {
  id: "f1-crash-after-acquire",
  title: "The holder crashes right after acquiring",
  question: "What if the process dies holding the lease: no finally, no release, no renewal?",
  failureMode: "Crash after acquire: the lease is never released",
  expected:
    "The crashed switch stops dead; the lease stays (not renewed) until its TTL, refusing others meanwhile; " +
    "then the next switch takes it over and recovers the half-done switch from the journal. A process that " +
    "dies with its link at the provider: the provider applies the link after its caller has gone, and the " +
    "background reconciler settles the switch with no further click, fencing off or on.",
  tryNext:
    "In the lab controls, set “Crash the next operation” to after the unlink and click Make primary; then watch the " +
    "next click finish the half-done switch.",
  async run(lab) {
    const acquire = await afterAcquire(lab);
    const unfenced = await duringLink(lab, false);
    const fenced = await duringLink(lab, true);
    const asExpected =
      acquire.crashed.problemType === "operation-crashed" &&
      acquire.leaseHeldAfterCrash &&
      !acquire.leaseRenewedAfterCrash &&
      acquire.refusedMeanwhile.status === 409 &&
      acquire.next.status === 200 &&
      acquire.recoveredBy === acquire.next.operationId &&
      acquire.auditConsistent &&
      landedAndSettled(unfenced) &&
      landedAndSettled(fenced);
    return {
      observed: { ttlMs, ...acquire, duringLink: { unfenced, fenced } },
      asExpected,
      explanation: asExpected
        ? [
            `The first switch acquired the lease and its process "died" right after (the lab's crash fault): ` +
              "no finally ran, so nothing released the lease, and nothing renewed it either (its expiry did " +
              `not move in ${ttlMs / 2} ms). A switch in the meantime got 409. After about ` +
              `${acquire.lockedOutMs} ms the lease expired by itself; the next switch took it over, found the ` +
              `crashed switch in the journal at step "${acquire.crashedJournalStep}", settled it against the ` +
              "provider, then did its own work. The audit is consistent. The TTL is what turns a crash into a " +
              "wait instead of a permanent lock.",
            duringLinkWords(unfenced),
            duringLinkWords(fenced),
          ].join(" ")
        : [
            "Expected a crash answer, a held but unrenewed lease, a 409 meanwhile, then a 200 that recovers " +
              "the journal entry; and, for a crash during the link, the link applied after its caller had gone " +
              `and the switch settled by the reconciler. Measured: the crashed switch answered ` +
              `${acquire.crashed.status}, the switch meanwhile ${acquire.refusedMeanwhile.status}, and the next ` +
              `one ${acquire.next.status}. The lease was ` +
              `${acquire.leaseRenewedAfterCrash ? "renewed after the crash" : "not renewed after the crash"}, ` +
              "and the journal entry was " +
              `${acquire.recoveredBy ? `recovered by ${acquire.recoveredBy}` : "recovered by nobody"}.`,
            duringLinkMeasured(unfenced),
            duringLinkMeasured(fenced),
          ].join(" "),
    };
  },
};
