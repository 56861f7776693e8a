import { setTimeout as pause } from "node:timers/promises";
import pg from "pg";
import { countByStatus } from "../../core/status-counts";
import { promotionAfter, type DatabaseNode } from "../database-nodes";
import { databaseOperations, leaseOn, primaryAndStandby } from "./failover-facts";
import type { ProviderCall } from "../../provider-sim/lab-client";
import type { UserAudit } from "../audit";
import { ada, appliedWrites, slowSwitchCalls, type Attempt, type Lab } from "./lab";
import type { Experiment } from "./types";

const clients = 3;
const ttlMs = 2_000;
const switchCallMs = 100;
// Enough answers before the kill to see the load as it runs at rest.
const loadBeforeKillMs = 2_000;
// The load goes on this long after the first 200 past the promotion: the app serving again, not once by chance.
const loadAfterBackMs = 2_000;
// A user clicks again half a second after an answer; after a 503, a second (sooner than its Retry-After says,
// to see when the app is back). Back to back, the refusals (a few ms each) would make a thousand lanes.
const clickAgainMs = 500;
const clickAgainUnavailableMs = 1_000;
const limitMs = 90_000;
const identities = [ada.google, ada.github, ada.email, ada.apple];

/** `clients` clients switching ada's primary (each to the next of her identities) until `stop()`. */
function switchLoad(lab: Lab) {
  const answers: Attempt[] = [];
  let stopping = false;
  const loops = Array.from({ length: clients }, async (_, client) => {
    for (let turn = 1; !stopping; turn++) {
      const identity = identities[(client + turn) % identities.length]!;
      const answer = await lab.switchTo(identity, `client ${client + 1}, switch ${turn}`);
      answers.push(answer);
      await pause(answer.status === 503 ? clickAgainUnavailableMs : clickAgainMs);
    }
  });
  return {
    answers,
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

/** Until `node` has ended its recovery (a primary now, out of its last WAL's replay); false within the limit. */
async function untilOutOfRecovery(node: DatabaseNode): Promise<boolean> {
  for (const limit = Date.now() + limitMs; Date.now() < limit; await pause(50)) {
    const client = new pg.Client({ connectionString: node.url, connectionTimeoutMillis: 1_000 });
    client.on("error", () => undefined);
    const primary = await client
      .connect()
      .then(() => client.query<{ primary: boolean }>("SELECT NOT pg_is_in_recovery() AS primary"))
      .then(
        ({ rows }) => rows[0]?.primary === true,
        () => false,
      )
      .finally(() => client.end().catch(() => undefined));
    if (primary) return true;
  }
  return false;
}

/** Until `answer` holds of an answer (or the limit passes). */
async function untilAnswer(answers: Attempt[], answer: (each: Attempt) => boolean): Promise<Attempt | null> {
  for (const limit = Date.now() + limitMs; Date.now() < limit; await pause(50)) {
    const found = answers.find(answer);
    if (found) return found;
  }
  return null;
}

/** Polls the audit until it is settled (no call may still land), within the limit. */
async function settledAudit(lab: Lab) {
  const started = performance.now();
  let audit = await lab.audit();
  while (!audit.settled && performance.now() - started < limitMs) {
    await pause(250);
    audit = await lab.audit();
  }
  return { audit, settledAfterMs: Math.round(performance.now() - started) };
}

/**
 * The kill of the primary (marked on the lane that started last) and Patroni's promotion (marked likewise), with
 * ada's fence read on the primary just before the kill and on the promoted node as soon as its replay is over.
 */
async function killThePrimary(lab: Lab, primary: DatabaseNode, standby: DatabaseNode) {
  // Every acquisition committed before the kill has this fence or less.
  const fenceBeforeKill = (await leaseOn(primary))?.fence ?? null;
  const killedAt = new Date();
  const killedMs = lab.sinceStart();
  await databaseOperations.kill(primary.name);
  const killed = `the primary ${primary.name} is killed (SIGKILL to Patroni and PostgreSQL)`;
  lab.mark(lab.operationIds.at(-1)!, killed, killedAt);
  const promotion = await promotionAfter(killedAt, primary.name, { limitMs });
  if (!promotion) return { fenceBeforeKill, killedMs, promotion, promotedMs: null, fenceOnPromoted: null };
  lab.mark(lab.operationIds.at(-1)!, `Patroni promotes ${promotion.node}, the synchronous standby`, promotion.at);
  // What it kept of the old primary (the app may have begun writing on it: the fence only grows then).
  const fenceOnPromoted = (await untilOutOfRecovery(standby)) ? ((await leaseOn(standby))?.fence ?? null) : null;
  const promotedMs = killedMs + (promotion.at.getTime() - killedAt.getTime());
  return { fenceBeforeKill, killedMs, promotion, promotedMs, fenceOnPromoted };
}

/**
 * The load, the kill and the promotion, the load until the app has served again for `loadAfterBackMs`, the
 * audit once settled, and the old primary back as a standby.
 */
async function failoverUnderLoad(lab: Lab) {
  await lab.fresh({
    strategy: "lease",
    leaseTtlMs: ttlMs,
    reconcileAfterMs: 500,
    provider: slowSwitchCalls(switchCallMs),
  });
  const { primary, standby } = await primaryAndStandby();
  const load = switchLoad(lab);
  await lab.at(lab.sinceStart() + loadBeforeKillMs);
  const failover = await killThePrimary(lab, primary, standby);
  const { promotedMs } = failover;
  const back =
    promotedMs === null ? null : await untilAnswer(load.answers, (a) => a.status === 200 && a.endedMs > promotedMs);
  if (back) await lab.at(back.endedMs + loadAfterBackMs);
  await load.stop();
  const settled = await settledAudit(lab);
  const calls = await lab.calls();
  await databaseOperations.rejoin(primary.name);
  const after = await primaryAndStandby().catch(() => null);
  return {
    killed: primary.name,
    standby: standby.name,
    ...facts(load.answers, calls, failover, back),
    audit: { ...pick(settled.audit), settledAfterMs: settled.settledAfterMs },
    rejoined: after && { primary: after.primary.name, standby: after.standby.name },
  };
}

const pick = ({ settled, consistent, violations }: UserAudit) => ({ settled, consistent, violations });

/**
 * The switches the refusals before the first 200 waited for (the refusals' `awaitedOperationId`), with their
 * answer and how many of their provider writes the provider's log shows applied.
 */
function awaiting(answers: Attempt[], refusals: Attempt[], calls: ProviderCall[]) {
  const ids = new Set(refusals.flatMap((refusal) => refusal.awaitedOperationId ?? []));
  return answers
    .filter((answer) => ids.has(answer.operationId))
    .map((answer) => ({
      ...answerFact(answer),
      refusals: refusals.filter((refusal) => refusal.awaitedOperationId === answer.operationId).length,
      writesApplied: appliedWrites(calls, answer.operationId),
    }));
}

/** What the answers say of the failover. */
function facts(
  answers: Attempt[],
  calls: ProviderCall[],
  failover: Awaited<ReturnType<typeof killThePrimary>>,
  back: Attempt | null,
) {
  const { killedMs, promotedMs } = failover;
  const refusedBeforeBack = answers.filter(
    (answer) =>
      answer.status === 409 &&
      promotedMs !== null &&
      answer.endedMs > promotedMs &&
      answer.endedMs < (back?.endedMs ?? Infinity),
  );
  return {
    clients,
    promoted: failover.promotion?.node ?? null,
    fenceBeforeKill: failover.fenceBeforeKill,
    fenceOnPromoted: failover.fenceOnPromoted,
    killToPromotionMs: promotedMs === null ? null : promotedMs - killedMs,
    killToFirst200Ms: back ? back.endedMs - killedMs : null,
    answers: countByStatus(answers),
    before: countByStatus(answers.filter((answer) => answer.endedMs < killedMs)),
    refusedBeforeBack: { count: refusedBeforeBack.length, awaiting: awaiting(answers, refusedBeforeBack, calls) },
    unexpectedAnswers: answers.filter((answer) => ![200, 409, 503].includes(answer.status)).map(answerFact),
    unavailableWithoutRetryAfter: answers.filter((answer) => answer.status === 503 && !answer.retryAfter).length,
    unavailableRetryAfter: [
      ...new Set(answers.flatMap((answer) => (answer.status === 503 && answer.retryAfter ? [answer.retryAfter] : []))),
    ],
  };
}

type Measured = Awaited<ReturnType<typeof failoverUnderLoad>>;

const answerFact = ({ label, status, problemType, endedMs }: Attempt) => ({ label, status, problemType, endedMs });

function asExpected(run: Measured): boolean {
  return (
    run.promoted === run.standby &&
    run.fenceBeforeKill !== null &&
    run.fenceOnPromoted !== null &&
    BigInt(run.fenceOnPromoted) >= BigInt(run.fenceBeforeKill) &&
    (run.before["200"] ?? 0) > 0 &&
    run.killToFirst200Ms !== null &&
    run.unexpectedAnswers.length === 0 &&
    run.unavailableWithoutRetryAfter === 0 &&
    run.audit.settled &&
    run.audit.consistent &&
    run.rejoined?.standby === run.killed
  );
}

const counted = (answers: Record<string, number>) =>
  Object.entries(answers)
    .map(([status, count]) => `${count} × ${status}`)
    .join(", ") || "none";

/** What kept the first 200 after the promotion waiting, as far as the answers tell. */
function untilBack(run: Measured): string {
  const { count, awaiting: awaited } = run.refusedBeforeBack;
  const waitedFor = awaited.find((each) => each.status !== 200);
  if (waitedFor)
    return (
      `${waitedFor.refusals} switches on ${run.promoted} were refused 409 operation-in-progress: ${waitedFor.label}, ` +
      `cut by the kill (answered ${waitedFor.status}; the provider's log shows ${waitedFor.writesApplied} of its ` +
      "writes applied), had held the lease, and the lease cannot know whether a call of it may still land: nothing " +
      "is read safely before the provider's limit has passed"
    );
  return (
    `${count} refused 409 meanwhile; the rest is HAProxy's /primary checks moving the app's connections to ` +
    `${run.promoted}, and the pool's connections to the dead node failing one by one`
  );
}

function explanation(run: Measured): string[] {
  const promotion = (run.killToPromotionMs! / 1000).toFixed(1);
  const back = (run.killToFirst200Ms! / 1000).toFixed(1);
  const backAfterPromotion = ((run.killToFirst200Ms! - run.killToPromotionMs!) / 1000).toFixed(1);
  return [
    `${run.clients} clients switched ada's primary under the lease, each clicking again ${clickAgainMs} ms after ` +
      `its answer (${counted(run.before)} before the kill: one holder at a time, the others refused at acquisition).`,
    `The primary ${run.killed} was killed (SIGKILL to Patroni and PostgreSQL). Patroni promoted ${run.promoted}, its ` +
      `synchronous standby, ${promotion} s later: the dead leader's key in etcd expires within its ttl (5 s), and ` +
      "the standby takes it at its next loop.",
    `Meanwhile the app answered 503 database-unavailable with Retry-After ${run.unavailableRetryAfter.join(", ") || "—"} ` +
      `(each client tried again ${clickAgainUnavailableMs / 1000} s after one), never a 500. The first 200 came ` +
      `${back} s after the kill, ${backAfterPromotion} s after the promotion: ${untilBack(run)}.`,
    `Every answer: ${counted(run.answers)}. The audit settled consistent ${run.audit.settledAfterMs} ms after the ` +
      "load stopped: ada's primary is the same in the app and at the provider. Nothing committed was lost: the " +
      `fence read on ${run.killed} just before the kill was ${run.fenceBeforeKill}, and ${run.promoted} had ` +
      `${run.fenceOnPromoted} once promoted (Patroni's synchronous mode promotes only a standby that has every ` +
      "acknowledged commit).",
    `${run.killed} came back as the standby of ${run.rejoined?.primary} (Patroni, pg_rewind): the lab is as it was, ` +
      "the two nodes' roles swapped.",
  ];
}

function unexpected(run: Measured): string {
  return (
    "Expected Patroni to promote the standby, every answer 200, 409 or 503 with Retry-After, a 200 again after the " +
    `promotion and the audit consistent once settled. Measured: promoted ${run.promoted ?? "nothing"} ` +
    `(fence ${run.fenceBeforeKill ?? "unread"} before the kill, ${run.fenceOnPromoted ?? "unread"} once promoted) ` +
    `(${run.killToPromotionMs ?? "—"} ms after the kill), first 200 after it ${run.killToFirst200Ms ?? "never"} ms ` +
    `after the kill, answers ${counted(run.answers)}, ${run.unavailableWithoutRetryAfter} × 503 without ` +
    `Retry-After, other answers ${JSON.stringify(run.unexpectedAnswers)}, the audit ` +
    `${run.audit.settled ? "settled" : "not settled"} and ${run.audit.consistent ? "consistent" : "not consistent"} ` +
    `(${run.audit.violations.join("; ") || "no violation"}), after it ${JSON.stringify(run.rejoined)}.`
  );
}

export const haFailoverUnderLoad: Experiment = {
  id: "ha-failover-under-load",
  title: "Patroni fails over while users keep switching",
  question: "What do users switching see while Patroni replaces a primary that died?",
  failureMode: null,
  expected:
    `${clients} clients keep switching ada's primary; the primary is killed (SIGKILL) and Patroni promotes the ` +
    "synchronous standby within seconds. Every answer is 200, 409 or 503 database-unavailable with Retry-After " +
    "(never a 500), the app answers 200 again after the promotion, and the audit settles consistent. The old " +
    "primary then comes back as the standby.",
  tryNext:
    "With npm run dev -- --ha, keep double-clicking Make primary while you kill the primary " +
    "(curl -X POST the operator's /nodes/<primary>/kill): the page answers 503 with Retry-After until Patroni has " +
    "promoted the standby, then 200 again; POST /nodes/<node>/rejoin brings the node back.",
  needs: ["patroni", "etcd-server"],
  async run(lab) {
    const run = await failoverUnderLoad(lab);
    const expected = asExpected(run);
    return {
      observed: { ttlMs, switchCallMs, ...run },
      asExpected: expected,
      explanation: expected ? explanation(run).join(" ") : unexpected(run),
    };
  },
};
