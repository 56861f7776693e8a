import { peerUrls } from "../instances";
import { inProcessGuard } from "../strategies";
import { ada, appliedWrites, fact, slowSwitchCalls, type Attempt, type Lab } from "./lab";
import type { Experiment } from "./types";

/** A switch sent to another app instance over HTTP, signed in as ada there. */
async function switchOnPeer(lab: Lab, peerUrl: string, identityId: string): Promise<Attempt> {
  const startedMs = lab.sinceStart();
  const session = await fetch(`${peerUrl}/api/session`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ userId: ada.userId }),
  });
  const cookie = session.headers.get("set-cookie")?.split(";")[0] ?? "";
  const answer = await fetch(`${peerUrl}/api/users/${ada.userId}/primary`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Cookie: cookie },
    body: JSON.stringify({ identityId }),
  });
  const body = (await answer.json()) as { operationId?: string; type?: string };
  if (body.operationId) lab.note(body.operationId);
  return {
    label: `switch on the other instance (${peerUrl})`,
    operationId: body.operationId ?? "",
    status: answer.status,
    problemType: body.type?.split("/").at(-1) ?? null,
    startedMs,
    endedMs: lab.sinceStart(),
  };
}

/** Two switches at the same instant: one here, one on "the other instance". */
async function pair(lab: Lab, settings: Record<string, unknown>, peer: string | null, ttlMs: number) {
  await lab.fresh({ ...settings, provider: slowSwitchCalls(400) });
  // Without a real second instance, a second in-process guard with a memory of its own is one.
  const elsewhere = peer
    ? switchOnPeer(lab, peer, ada.email)
    : lab.switchTo(
        ada.email,
        "switch on the other instance (simulated: its own memory)",
        settings.strategy === "in-process"
          ? { strategy: "in-process", guard: () => inProcessGuard(ttlMs, new Map()) }
          : undefined,
      );
  const [here, there] = await Promise.all([lab.switchTo(ada.github, "switch on this instance"), elsewhere]);
  const [audit, calls] = await Promise.all([lab.audit(), lab.calls()]);
  return {
    here: fact(here),
    there: fact(there),
    providerWritesApplied: {
      here: appliedWrites(calls, here.operationId),
      there: appliedWrites(calls, there.operationId),
    },
    auditConsistent: audit.consistent,
    violations: audit.violations,
  };
}

export const inProcessMutex: Experiment = {
  id: "in-process-mutex",
  title: "A mutex in the server's memory",
  question: "Why not just a lock in the application's memory?",
  failureMode: null,
  expected:
    "With one instance the in-process mutex queues the switches and the provider stays consistent; with two, each instance's memory has its own mutex, both switches run, and the provider is corrupted; the lease holds across both.",
  tryNext:
    "Start `npm run dev -- --instances 2`, choose the in-process strategy, and click Make primary in a tab of each instance at once.",
  async run(lab) {
    const ttlMs = 10_000;
    const peer = peerUrls()[0] ?? null;
    await lab.fresh({ strategy: "in-process" });
    const [first, second] = await Promise.all([
      lab.switchTo(ada.github, "switch on this instance"),
      lab.switchTo(ada.email, "second switch on this instance"),
    ]);
    const oneInstance = { first: fact(first), second: fact(second), auditConsistent: (await lab.audit()).consistent };
    const twoInstances = await pair(lab, { strategy: "in-process" }, peer, ttlMs);
    const lease = await pair(lab, { strategy: "lease" }, peer, ttlMs);
    // The second switch waited for the first: it ended well after the first did, though they started together.
    const secondWaitedForFirst =
      Math.min(first.endedMs, second.endedMs) > Math.max(first.startedMs, second.startedMs) + 50;
    const asExpected =
      secondWaitedForFirst &&
      oneInstance.auditConsistent &&
      first.status === 200 &&
      second.status === 200 &&
      !twoInstances.auditConsistent &&
      lease.auditConsistent &&
      [lease.here.status, lease.there.status].includes(409);
    return {
      observed: {
        secondInstance: peer
          ? `a real second app instance at ${peer}`
          : "simulated: a second in-process mutex with its own memory",
        oneInstance: { ...oneInstance, secondWaitedForFirst },
        twoInstances,
        lease,
      },
      asExpected,
      explanation: asExpected
        ? `One instance: the second switch queued on the promise chain (it ended ${Math.abs(second.endedMs - first.endedMs)} ms after the first) and both succeeded, consistent. Two instances (${peer ? "a real one at " + peer : "simulated by a second mutex with its own memory, as another process has"}): neither memory knew of the other's switch, both ran their calls at once (${twoInstances.providerWritesApplied.here} and ${twoInstances.providerWritesApplied.there} writes applied) and the provider split: ${twoInstances.violations.join("; ")}. The lease lives in the database both instances share: one switch got ${lease.here.status}, the other ${lease.there.status}, consistent. A lock must live where every writer can see it.`
        : `Expected the in-process mutex to keep one instance's clicks apart but not two instances', and the lease to keep both apart. Measured: on one instance the clicks answered ${first.status} and ${second.status}, the second ${secondWaitedForFirst ? "waited for the first" : "did not wait for the first"}, and the audit is ${oneInstance.auditConsistent ? "consistent" : "inconsistent"}. On two instances the audit is ${twoInstances.auditConsistent ? "consistent" : "inconsistent"}. Under the lease the two instances answered ${lease.here.status} and ${lease.there.status}, and the audit is ${lease.auditConsistent ? "consistent" : "inconsistent"}.`,
    };
  },
};
