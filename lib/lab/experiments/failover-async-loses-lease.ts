import { findUser } from "../../switch/users";
import {
  databaseOperations,
  keepingReplicationMode,
  leaseOn,
  pausedBefore,
  plus,
  primaryAndStandby,
  timelineNow,
  untilWritable,
} from "./failover-facts";
import type { DatabaseNode } from "../database-nodes";
import type { LabSettings } from "../settings-schema";
import { ada, appliedWrites, fact, slowSwitchCalls, type Lab } from "./lab";
import type { Experiment } from "./types";

// Long enough that no renewal (every TTL / 3) falls between the first holder's pause and its call.
const ttlMs = 30_000;

const callsOf = async (lab: Lab, operationId: string) =>
  (await lab.calls()).filter((call) => call.operationId === operationId);

const database = databaseOperations;

/** The variant's lab: the lease, no reconciler, a provider that fences by (generation, fence) or the fence alone. */
const freshVariant = (lab: Lab, fenceGenerations: boolean) =>
  lab.fresh(
    {
      strategy: "lease",
      leaseTtlMs: ttlMs,
      // The reconciler would take the lease to settle the last switch: this run shows what is left.
      reconcileAfterMs: null,
      provider: { ...slowSwitchCalls(150), enforceFencing: true, fenceGenerations },
    },
    fenceGenerations ? "the provider compares (generation, fence)" : "the provider compares the fence alone",
  );

/**
 * Replication stopped, two acquisitions on the primary only: the first switch changes nothing, the second
 * pauses right before its unlink. The lease as each node has it then.
 */
async function acquiredOnPrimaryOnly(lab: Lab, settings: LabSettings, primary: DatabaseNode, standby: DatabaseNode) {
  await database.mode("async");
  const before = await leaseOn(primary);
  await database.stopReplication();
  const unchanged = await lab.switchTo(ada.google, "first switch, to the primary she has (changes nothing)");
  const first = pausedBefore(settings, "unlink", "paused on purpose after its last check, right before its unlink");
  const late = lab.switchTo(ada.github, "second switch (pauses right before its unlink)", first.own);
  await first.reached;
  const lateId = lab.operationIds.at(-1)!;
  const held = { onPrimary: await leaseOn(primary), onStandby: await leaseOn(standby) };
  return { before, unchanged, first, late, lateId, held };
}

/** The primary killed and the standby promoted, marked on the late switch's lane; when the app writes again. */
async function promoteStandby(lab: Lab, primary: DatabaseNode, standby: DatabaseNode, lateId: string) {
  await database.kill(primary.name);
  await database.promote(standby.name);
  lab.mark(
    lateId,
    `the primary ${primary.name} is killed (SIGKILL) and the standby ${standby.name} promoted (pg_ctl promote): ` +
      `${standby.name} had received nothing since replication was stopped, before the first switch`,
  );
  const writableAfterMs = await untilWritable(lab.db);
  const promotedTimeline = await timelineNow(lab.db);
  return { node: standby.name, timeline: promotedTimeline, writableAfterMs };
}

/**
 * A third switch on the promoted standby pauses before its link while the second one's unlink goes out; both
 * answers, and the lease the third switch took.
 */
async function lateWriteMeetsThird(lab: Lab, settings: LabSettings, standby: DatabaseNode, lost: LostOnPrimary) {
  const second = pausedBefore(
    settings,
    "link",
    "paused on purpose before its link, while the second one's unlink lands",
  );
  const next = lab.switchTo(ada.email, "third switch, on the promoted standby (pauses before its link)", second.own);
  await second.reached;
  const taken = await leaseOn(standby);
  lost.first.resume();
  const lateAnswer = await lost.late;
  second.resume();
  const nextAnswer = await next;
  return { taken, lateAnswer, nextAnswer };
}

type LostOnPrimary = Awaited<ReturnType<typeof acquiredOnPrimaryOnly>>;

/**
 * One failover with acquisitions lost: replication stopped, two acquisitions on the primary (the first changes
 * nothing, the second pauses right before its unlink), the primary killed, the standby promoted; a third switch
 * on it pauses before its link while the second one's unlink goes out. The provider compares (generation,
 * fence), or the fence alone (`fenceGenerations: false`).
 */
async function lostAcquisitions(lab: Lab, fenceGenerations: boolean) {
  const settings = await freshVariant(lab, fenceGenerations);
  const { primary, standby } = await primaryAndStandby();
  const lost = await acquiredOnPrimaryOnly(lab, settings, primary, standby);
  const promoted = await promoteStandby(lab, primary, standby, lost.lateId);
  const { taken, lateAnswer, nextAnswer } = await lateWriteMeetsThird(lab, settings, standby, lost);
  const [audit, user, lateCalls, nextCalls] = await Promise.all([
    lab.audit(),
    findUser(lab.db, ada.userId),
    callsOf(lab, lateAnswer.operationId),
    callsOf(lab, nextAnswer.operationId),
  ]);
  await database.rejoin(primary.name);
  const calls = (list: typeof lateCalls) => list.map(({ method, status, outcome }) => ({ method, status, outcome }));
  const { before, held } = lost;
  return {
    fenceGenerations,
    before: before && { fence: before.fence, generation: before.generation },
    lost: { unchanged: fact(lost.unchanged), secondOnPrimary: held.onPrimary, secondOnStandby: held.onStandby },
    promoted,
    third: taken && { fence: taken.fence, generation: taken.generation },
    late: { ...fact(lateAnswer), calls: calls(lateCalls) },
    next: { ...fact(nextAnswer), calls: calls(nextCalls) },
    lateWritesApplied: appliedWrites(lateCalls, lateAnswer.operationId),
    localPrimary: user?.primaryIdentityId ?? null,
    auditConsistent: audit.consistent,
    violations: audit.violations,
  };
}

type Variant = Awaited<ReturnType<typeof lostAcquisitions>>;

const wrote = (variant: Variant["late"], method: string) => variant.calls.find((call) => call.method === method);

/** Both variants' facts agree with the lesson: the lost acquisitions, the repeated counter, the greater generation. */
function lostAsExpected(variant: Variant): boolean {
  const { before, lost, third } = variant;
  return (
    lost.secondOnPrimary?.fence === plus(before?.fence, 2) &&
    lost.secondOnStandby?.fence === before?.fence &&
    third?.fence === plus(before?.fence, 1) &&
    BigInt(third?.generation ?? 0) > BigInt(lost.secondOnPrimary?.generation ?? 0)
  );
}

function asExpected(counter: Variant, epoch: Variant): boolean {
  return (
    lostAsExpected(counter) &&
    lostAsExpected(epoch) &&
    wrote(counter.late, "DELETE")?.status === 200 &&
    wrote(counter.next, "POST")?.outcome === "fenced" &&
    !counter.auditConsistent &&
    wrote(epoch.late, "DELETE")?.outcome === "fenced" &&
    epoch.late.problemType === "fenced" &&
    epoch.next.status === 200 &&
    epoch.localPrimary === ada.email &&
    epoch.auditConsistent
  );
}

function explanation(counter: Variant, epoch: Variant): string[] {
  const lost = counter.lost.secondOnPrimary;
  const late = (variant: Variant) => `${variant.late.status} ${variant.late.problemType}`;
  return [
    "Replication was asynchronous and stopped on purpose: the standby received nothing more. On the primary, " +
      `a first switch that changed nothing took fence ${plus(counter.before?.fence, 1)}, and a second one took ` +
      `fence ${lost?.fence} in generation ${lost?.generation} and paused right before its unlink. The standby ` +
      `still had fence ${counter.lost.secondOnStandby?.fence}, and no lease.`,
    `The primary was killed and the standby promoted: the app wrote again ${counter.promoted.writableAfterMs} ms ` +
      `later, on timeline ${counter.promoted.timeline}. Both acquisitions were gone, and so was the first switch's ` +
      "row of the timeline, written on the old primary after replication stopped. A third switch found the lease free and took fence " +
      `${counter.third?.fence}, the number the first switch had been given already, in generation ` +
      `${counter.third?.generation}; it unlinked and paused before its link while the second switch woke and ` +
      "sent its unlink.",
    `Fence alone: the provider had seen ${counter.third?.fence} (the third switch's) and took the second ` +
      `switch's ${lost?.fence} as newer. Its unlink was applied (${wrote(counter.late, "DELETE")?.status}) though ` +
      `its lease no longer existed anywhere; its next step found no lease and stopped (${late(counter)}). The ` +
      `rightful holder's link was then refused as stale (${counter.next.status} ${counter.next.problemType}). ` +
      `The audit: ${counter.violations.join("; ") || "consistent"}. The second switch's journal entry was lost ` +
      "with the old primary: nothing will put that identity back.",
    `(Generation, fence): the third switch's pair (${epoch.third?.generation}, ${epoch.third?.fence}) outranks ` +
      "every pair of the primary before it, whatever the counter says. The late unlink " +
      `(${epoch.lost.secondOnPrimary?.generation}, ${epoch.lost.secondOnPrimary?.fence}) was refused ` +
      `(${late(epoch)}), the third switch finished (${epoch.next.status}), and the audit is ` +
      `${epoch.auditConsistent ? "consistent" : `inconsistent: ${epoch.violations.join("; ")}`}.`,
    "Asynchronous replication loses what the standby had not received: here two acquisitions, so the counter " +
      "handed out a number already issued. Only a fence whose generation grows at every promotion stays a fence " +
      "across it.",
  ];
}

/** The measured facts, when they are not what the lesson says. */
function unexpected(counter: Variant, epoch: Variant): string {
  const call = (variant: Variant["late"], method: string) =>
    `${wrote(variant, method)?.status ?? "nothing"} ${wrote(variant, method)?.outcome ?? ""}`.trim();
  return (
    "Expected the fence alone to let the late unlink in and the (generation, fence) pair to refuse it. " +
    `Measured, fence alone: the second switch's unlink answered ${call(counter.late, "DELETE")}, the third ` +
    `switch's link ${call(counter.next, "POST")}, the audit ${counter.auditConsistent ? "consistent" : "not"}; ` +
    `pair: the late unlink ${call(epoch.late, "DELETE")}, the third switch ${epoch.next.status}, the audit ` +
    `${epoch.auditConsistent ? "consistent" : "not"}. Fences: before ${counter.before?.fence}, the second ` +
    `switch's ${counter.lost.secondOnPrimary?.fence} (the standby had ${counter.lost.secondOnStandby?.fence}), ` +
    `the third's ${counter.third?.fence}.`
  );
}

export const failoverAsyncLosesLease: Experiment = {
  id: "failover-async-loses-lease",
  title: "An asynchronous standby promoted after acquisitions it never received",
  question: "What does a failover to an asynchronous replica do to a lease and its fence?",
  failureMode: "Async failover: acquisitions lost, a fence counter handed out twice, a late write accepted",
  expected:
    "With replication stopped on purpose, two switches acquire on the primary (the second pauses before its " +
    "unlink); the primary is killed and the standby promoted. A third switch takes the free lease with the fence " +
    "counter the first one had. With the fence alone, the provider accepts the second switch's late unlink and " +
    "refuses the third switch's link: the audit shows the corruption. With (generation, fence), it refuses the " +
    "late unlink (409 fenced), the third switch finishes, and the audit is consistent.",
  tryNext:
    "With npm run dev -- --replica async, stop replication (curl -X POST the operator's /replication/pause), " +
    "click Make primary, kill the primary (POST /nodes/<primary>/kill) and promote the standby " +
    "(POST /nodes/<standby>/promote): the switch's lane and its lease are gone, and its fence is handed out again.",
  needs: ["postgresql-15"],
  run: (lab) =>
    keepingReplicationMode(async () => {
      const counter = await lostAcquisitions(lab, false);
      const epoch = await lostAcquisitions(lab, true);
      const expected = asExpected(counter, epoch);
      return {
        observed: { ttlMs, counterAlone: counter, generationThenCounter: epoch },
        asExpected: expected,
        explanation: expected ? explanation(counter, epoch).join(" ") : unexpected(counter, epoch),
      };
    }),
};
