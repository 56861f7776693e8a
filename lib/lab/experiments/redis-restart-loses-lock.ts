import { config } from "../../core/config";
import { adaKeyHeld, restartRedis } from "./redis-facts";
import { ada, appliedWrites, fact, slowSwitchCalls } from "./lab";
import type { Experiment } from "./types";

const callMs = 1_000;

interface RedisReading {
  first: { status: number };
  second: { status: number };
  /** How long redis-server was away; null: it did not answer again. */
  awayMs: number | null;
  heldBefore: boolean;
  heldAfterRestart: boolean | null;
  secondCalledProviderWhileFirstDid: boolean;
  audit: { consistent: boolean; violations: string[] };
}

/** The run's story in words: the restart, the second holder, the first one's release. */
function explain(reading: RedisReading, asExpected: boolean): string {
  const { first, second, awayMs, heldBefore, heldAfterRestart, secondCalledProviderWhileFirstDid, audit } = reading;
  return asExpected
    ? "The first switch held ada's key in Redis when redis-server was shut down without saving, " +
        `during its ${callMs} ms unlink call (its lane showed the call running); its supervisor had it ` +
        `answering again ` +
        `${awayMs} ms later, with no keys. The second switch found no key, ` +
        `took the lock and called the provider while the first still did (it answered ${second.status}); ` +
        `the first answered ${first.status}, and its token-checked release deleted nothing (the key, ` +
        "if any, was not its own). The audit is " +
        `${
          audit.consistent
            ? "consistent this time: the two switches' calls happened not to corrupt the accounts"
            : `inconsistent: ${audit.violations.join("; ")}`
        }. ` +
        "A Redis lock lives in Redis's memory: a restart without persistence, " +
        "or a failover to a replica the key had not reached, hands it to a second holder, " +
        "and nothing tells the first. The lease lives in the row it protects, " +
        "in the database of record, and is as durable as that row."
    : awayMs === null
      ? `redis-server did not answer again within ${callMs} ms of its SHUTDOWN NOSAVE: ` +
        "this experiment needs the one the lab starts (npm run dev -- --redis), " +
        `which is started again when it exits. Measured: key held before ${heldBefore}, ` +
        `second switch ${second.status}.`
      : "Expected a restart without persistence to forget the held key and let a second switch in while " +
        `the first still called the provider. Measured: the key was ${heldBefore ? "held" : "not held"} ` +
        `before the restart and ${heldAfterRestart ? "still held" : "gone"} after it; ` +
        `Redis was away ${awayMs} ms; the second switch answered ${second.status} and ` +
        `${
          secondCalledProviderWhileFirstDid
            ? "called the provider while the first did"
            : "did not call the provider while the first did"
        }.`;
}

export const redisRestartLosesLock: Experiment = {
  id: "redis-restart-loses-lock",
  title: "Redis restarts while its lock is held",
  question: "What does a Redis lock survive? A restart without persistence.",
  failureMode: "A Redis restart (or a failover before replication) forgets the lock: a second holder gets in",
  expected:
    "Under `redis`, a switch holds its key; redis-server is restarted without persistence (SHUTDOWN " +
    "NOSAVE, started again by its supervisor) during the first provider call. The key is gone, " +
    "a second switch takes the lock and calls the provider while the first still does, " +
    "and the first one's release finds the key is not its own.",
  // The redis-server this instance was started with, on its own port (REDIS_PORT), read when the card is listed.
  get tryNext() {
    const server = config.redisUrl ? `-p ${new URL(config.redisUrl).port}` : "-p <the port of the lab's redis-server>";
    return (
      "With `npm run dev -- --redis`, choose `redis`, click Make primary and, while it runs, " +
      `redis-cli ${server} SHUTDOWN NOSAVE; click again once it is back.`
    );
  },
  needs: ["redis-server"],
  async run(lab) {
    await lab.fresh({ strategy: "redis", provider: slowSwitchCalls(callMs) });
    const running = lab.switchTo(ada.github, "redis: first switch (Redis restarts meanwhile)");
    // Inside the unlink call, as its lane shows it running.
    const inCall = await lab.inPhase(lab.operationIds.at(-1)!, "unlink", 5_000);
    const heldBefore = await adaKeyHeld();
    const restartedAt = new Date();
    const awayMs = await restartRedis(lab, callMs);
    const heldAfterRestart = awayMs === null ? null : await adaKeyHeld();
    const second = await lab.switchTo(ada.email, "redis: second switch, after the restart");
    const first = await running;
    lab.mark(
      first.operationId,
      awayMs === null
        ? "redis-server is shut down without saving, and does not answer again"
        : `redis-server restarts without persistence (away ${awayMs} ms): ` +
            (heldAfterRestart ? "its key is still there" : "its key is gone"),
      restartedAt,
    );
    const [audit, calls] = await Promise.all([lab.audit(), lab.calls()]);
    const callsOf = (operationId: string) => calls.filter((call) => call.operationId === operationId);
    const secondCallsStarted = callsOf(second.operationId).map((call) => Date.parse(call.at) - call.durationMs);
    const firstCallsEnded = callsOf(first.operationId).map((call) => Date.parse(call.at));
    const secondCalledProviderWhileFirstDid =
      secondCallsStarted.length > 0 && Math.min(...secondCallsStarted) < Math.max(...firstCallsEnded);
    const asExpected =
      inCall && heldBefore && awayMs !== null && heldAfterRestart === false && secondCalledProviderWhileFirstDid;
    return {
      observed: {
        providerCallMs: callMs,
        restartedDuringTheFirstCall: inCall,
        keyHeldBeforeRestart: heldBefore,
        redisAwayMs: awayMs,
        keyHeldAfterRestart: heldAfterRestart,
        first: fact(first),
        second: fact(second),
        secondCalledProviderWhileFirstDid,
        providerWritesApplied: {
          first: appliedWrites(calls, first.operationId),
          second: appliedWrites(calls, second.operationId),
        },
        auditConsistent: audit.consistent,
        violations: audit.violations,
      },
      asExpected,
      explanation: explain(
        { first, second, awayMs, heldBefore, heldAfterRestart, secondCalledProviderWhileFirstDid, audit },
        asExpected,
      ),
    };
  },
};
