import { findUser } from "../../switch/users";
import { ada, appliedWrites, fact, slowSwitchCalls, type Lab } from "./lab";
import type { Experiment } from "./types";

// Long enough that the TTL is far from the retries' backoff (400 ms, then 800 ms): textbook waits the TTL out,
// ours is free a second or so after its answer.
const ttlMs = 5_000;

/** A switch whose release fails, a second switch right after it, and when the lease became free again. */
async function releaseFails(
  lab: Lab,
  variant: string,
  label: string,
  releaseFailures: number,
  leaseSafeguards: boolean,
) {
  await lab.fresh(
    { leaseTtlMs: ttlMs, leaseSafeguards, provider: slowSwitchCalls(150), faults: { releaseFailures } },
    variant,
  );
  const first = await lab.switchTo(ada.github, label);
  const meanwhile = await lab.switchTo(ada.email, "second switch, right after the first answered");
  await lab.leaseFreeAfter(ttlMs * 2);
  const leaseFreeAfterAnswerMs = lab.sinceStart() - first.endedMs;
  const [lease, user, calls] = await Promise.all([lab.lease(), findUser(lab.db, ada.userId), lab.calls()]);
  const events = await lab.db
    .selectFrom("operation_events")
    .select("kind")
    .where("operation_id", "=", first.operationId)
    .where("kind", "=", "release-failed")
    .execute();
  const audit = await lab.audit();
  return {
    releaseFailures,
    first: fact(first),
    providerWritesApplied: appliedWrites(calls, first.operationId),
    primaryInUserRow: user?.primaryIdentityId ?? null,
    secondMeanwhile: fact(meanwhile),
    leaseFreeAfterAnswerMs,
    // A released lease has no token left; one that expired still shows its holder's.
    freedBy: lease.token === null ? "release" : "ttl",
    releaseFailedEvents: events.length,
    auditConsistent: audit.consistent,
  };
}

export const releaseFailsAfterCalls: Experiment = {
  id: "f3-release-fails",
  title: "The release fails after the work succeeded",
  question: "What does the client get when the switch worked but releasing the lease failed?",
  failureMode: "Release fails: the work is done, the lease is not given back",
  expected:
    "Textbook (release in finally, its error to the caller): the client gets an error (503: the connection failed under " +
    "the release) for a switch that happened (the provider and the user row changed). Ours answers 200 and retries the release " +
    "in the background. Either way a second switch meanwhile gets 409, " +
    "until the release succeeds (ours, about a second after the answer, well before the 5 s TTL) " +
    "or the TTL passes (textbook).",
  tryNext:
    "Set the fault `releaseFailures` to 2 on the main page, click Make primary (200), " +
    "click again at once (409), and watch the events: two failed releases, " +
    "then the lease is free; set it to 4 and the TTL frees it.",
  async run(lab) {
    const textbook = await releaseFails(
      lab,
      "textbook: release in finally, its error to the caller",
      "textbook switch (its release fails)",
      1,
      false,
    );
    const ours = await releaseFails(
      lab,
      "ours: the release retried in the background",
      "our switch (its first two releases fail)",
      2,
      true,
    );
    const asExpected =
      textbook.first.status === 503 &&
      textbook.providerWritesApplied === 2 &&
      textbook.primaryInUserRow === ada.github &&
      textbook.secondMeanwhile.status === 409 &&
      textbook.freedBy === "ttl" &&
      ours.first.status === 200 &&
      ours.providerWritesApplied === 2 &&
      ours.secondMeanwhile.status === 409 &&
      ours.freedBy === "release" &&
      ours.releaseFailedEvents === 2 &&
      ours.leaseFreeAfterAnswerMs < ttlMs / 2 &&
      textbook.leaseFreeAfterAnswerMs > ours.leaseFreeAfterAnswerMs * 2 &&
      ours.auditConsistent &&
      textbook.auditConsistent;
    return {
      observed: { ttlMs, textbook, ours },
      asExpected,
      explanation: asExpected
        ? `Textbook: the switch made both provider calls (${textbook.providerWritesApplied} applied) ` +
          `and saved the new primary (${textbook.primaryInUserRow}), then its release in finally threw, ` +
          `and that error replaced the result: the client got ${textbook.first.status} for a switch that ` +
          "happened, and may well retry it. The lease stayed: a second switch got " +
          `${textbook.secondMeanwhile.status}, and only the TTL freed it, ` +
          `${textbook.leaseFreeAfterAnswerMs} ms after the answer. Ours: the same switch answered ` +
          `${ours.first.status}; the failed release was logged and retried in the background with backoff ` +
          `(${ours.releaseFailedEvents} failed attempts recorded as events), ` +
          `a second switch meanwhile got ${ours.secondMeanwhile.status}, and attempt ` +
          `${ours.releaseFailedEvents + 1} freed the lease ${ours.leaseFreeAfterAnswerMs} ms after the ` +
          `answer, ${Math.round(textbook.leaseFreeAfterAnswerMs / ours.leaseFreeAfterAnswerMs)} times ` +
          "sooner than the textbook's TTL did. A release is housekeeping: its failure must not turn " +
          "finished work into an error, and the TTL is the backstop if every retry fails."
        : "Expected the textbook switch to answer 503 when its release fails and its lease to stay until " +
          "the TTL, and ours to answer 200 and be freed by its retried release long before it. " +
          `Measured, textbook: the switch answered ${textbook.first.status} with ` +
          `${textbook.providerWritesApplied} provider writes applied, a switch meanwhile ` +
          `${textbook.secondMeanwhile.status}, and the lease was freed by ${textbook.freedBy} ` +
          `${textbook.leaseFreeAfterAnswerMs} ms after the answer. Ours: the switch answered ` +
          `${ours.first.status}, a switch meanwhile ${ours.secondMeanwhile.status}, ` +
          `and the lease was freed by ${ours.freedBy} ${ours.leaseFreeAfterAnswerMs} ms after the answer, ` +
          `after ${ours.releaseFailedEvents} failed releases.`,
    };
  },
};
