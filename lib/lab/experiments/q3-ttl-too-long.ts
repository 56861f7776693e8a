import { sql } from "kysely";
import { ada, fact, slowSwitchCalls, type Lab } from "./lab";
import type { Experiment } from "./types";

const longTtlMs = 5_000;
/** The TTLs the trade-off is drawn for, scaled down like the provider's latencies. */
const sweptTtlsMs = [200, 300, 500, 800, 1_200, 1_600];
const sampledSwitches = 30;
/** Each provider write: a long tail (log-normal) with this median and 99th percentile; a seed keeps it repeatable. */
const latency = { medianMs: 60, p99Ms: 300, getMs: 20 };
const targets = [ada.github, ada.email, ada.apple, ada.google];

/** z-scores of a standard normal's 99th and 99.95th percentiles. */
const z99 = 2.3263478740408408;
const z9995 = 3.2905267314918945;

/** The log-normal call latency's 99.95th percentile: two calls each under it are under it together 99.9% of the time. */
const callP9995Ms = Math.round(latency.medianMs * (latency.p99Ms / latency.medianMs) ** (z9995 / z99));

/** Sequential switches under a long-tail provider, each timed: how long a switch holds its lease. */
async function sampleSwitchDurations(lab: Lab) {
  await lab.fresh(
    {
      leaseTtlMs: longTtlMs,
      leaseSafeguards: false,
      provider: {
        latencyMode: "longTail",
        medianLatencyMs: latency.medianMs,
        p99LatencyMs: latency.p99Ms,
        seed: 7,
        endpoints: { get: { latencyMode: "fixed", latencyMs: latency.getMs, jitterMs: 0 } },
      },
    },
    `${sampledSwitches} sampled switches, long-tail calls`,
  );
  const switches = [];
  for (let index = 0; index < sampledSwitches; index++)
    switches.push(await lab.switchTo(targets[index % targets.length]!, `sampled switch #${index + 1}`));
  const calls = await lab.calls();
  const durations = switches.map((each) => each.endedMs - each.startedMs);
  // What is not the provider: the database statements and the app's own work around the calls.
  const databaseMs = switches.map(
    (each, index) =>
      durations[index]! -
      calls.filter((call) => call.operationId === each.operationId).reduce((sum, call) => sum + call.durationMs, 0),
  );
  return { statuses: switches.map((each) => each.status), durations, slowestDatabaseMs: Math.max(...databaseMs) };
}

/** A crash right after acquiring under a long TTL: how long the user is locked out. */
async function crashUnderLongTtl(lab: Lab) {
  await lab.fresh(
    {
      leaseTtlMs: longTtlMs,
      provider: { ...slowSwitchCalls(100), enforceFencing: true },
      faults: { crash: "after-acquire" },
      // The next user's switch is the one that recovers here: the background reconciler, which would be
      // eligible the moment the lease expires (the entry has been quiet longer than its 3 s), is off.
      reconcileAfterMs: null,
    },
    "a crash after acquiring, TTL 5 s",
  );
  const crashed = await lab.switchTo(ada.github, "switch that crashes after acquiring");
  const refused = await lab.switchTo(ada.email, "switch while the dead holder's lease lasts");
  await lab.leaseFreeAfter(longTtlMs * 2);
  const lockedOutMs = lab.sinceStart() - crashed.endedMs;
  const next = await lab.switchTo(ada.email, "next switch, after the TTL");
  const journal = await sql<{ resolved_by: string | null }>`
    SELECT resolved_by FROM switch_journal WHERE operation_id = ${crashed.operationId}`.execute(lab.db);
  return {
    crashed: fact(crashed),
    refusedMeanwhile: fact(refused),
    lockedOutMs,
    next: fact(next),
    recoveredBy: journal.rows[0]?.resolved_by ?? null,
  };
}

const percentile = (sorted: number[], share: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;

interface TtlReading {
  sample: Awaited<ReturnType<typeof sampleSwitchDurations>>;
  /** The sampled switches' durations, sorted. */
  sorted: number[];
  sweep: { ttlMs: number; share: number }[];
  switchP999Ms: number;
  recommendedTtlMs: number;
  crash: Awaited<ReturnType<typeof crashUnderLongTtl>>;
}

/** The run's story in words: the sweep, the recommended TTL, then the crash under the long one. */
function explain(reading: TtlReading, asExpected: boolean): string {
  const { sample, sorted, sweep, switchP999Ms, recommendedTtlMs, crash } = reading;
  return asExpected
    ? `${sampledSwitches} switches against a long-tail provider (each write: ` +
        `median ${latency.medianMs} ms, p99 ${latency.p99Ms} ms) took ${percentile(sorted, 0.5)} ms at ` +
        `the median and ${sorted.at(-1)} ms at most. Over the sweep, a TTL of ${sweep[0]!.ttlMs} ms ` +
        `would have expired under ${Math.round(sweep[0]!.share * 100)}% of them (each a window for a ` +
        `second switch to take the lease over), ${sweep.find((point) => point.share === 0)!.ttlMs} ms ` +
        `under none of these ${sampledSwitches}; and the time a crash locks the user out grows with the ` +
        "TTL, one for one. A sample this small cannot see the p99.9, the provider's distribution can: " +
        `two writes each under their 99.95th percentile (${callP9995Ms} ms) ` +
        `plus the read and the slowest database part (${sample.slowestDatabaseMs} ms) ` +
        `give a switch's p99.9 of about ${switchP999Ms} ms; with a 20% margin the recommended TTL is ` +
        `${recommendedTtlMs} ms (renewal covers the rarer tail). With a TTL of ${longTtlMs} ms instead, ` +
        `a holder that crashed right after acquiring locked the user out for ${crash.lockedOutMs} ms (a ` +
        `switch meanwhile got 409), though no switch needed more than ${sorted.at(-1)} ms; ` +
        "then the next switch recovered the crashed one. Choose the TTL from the work's measured " +
        `duration, not "long to be safe".`
    : "Expected every sampled switch to succeed, expiries to fall as the TTL grows, " +
        "and a crash under the long TTL to lock the user out for about the whole TTL. " +
        `Measured: ${sample.statuses.filter((status) => status === 200).length} of ` +
        `${sample.statuses.length} sampled switches answered 200, the slowest in ${sorted.at(-1)} ms; ` +
        "over the sweep the share of switches a TTL would have expired under went " +
        `${sweep.map((point) => `${Math.round(point.share * 100)}% at ${point.ttlMs} ms`).join(", ")}; ` +
        `the recommended TTL is ${recommendedTtlMs} ms. The crashed switch answered ` +
        `${crash.crashed.status}${crash.crashed.problemType ? ` ${crash.crashed.problemType}` : ""}, ` +
        `a switch meanwhile ${crash.refusedMeanwhile.status}, the user was locked out ` +
        `${crash.lockedOutMs} ms of the ${longTtlMs} ms TTL, and the next switch answered ` +
        `${crash.next.status}${
          crash.recoveredBy === crash.next.operationId
            ? " and recovered the crashed one"
            : ", without recovering the crashed one"
        }.`;
}

export const ttlTooLong: Experiment = {
  id: "q3-ttl-too-long",
  title: "A TTL much longer than the switch",
  question: "What does a long TTL cost, and which TTL fits the provider?",
  failureMode: null,
  expected:
    "A holder that crashes under a long TTL locks the user out for the whole TTL. " +
    "Over a sweep of TTLs against the provider's latencies, short TTLs expire under running switches " +
    "(a steal is possible) and long ones lock out longer after a crash; " +
    "the recommended TTL is the switch's p99.9 plus a margin.",
  tryNext:
    "On the main page set a long-tail latency (median 200 ms, p99 2,000 ms), " +
    "arm a crash after acquire with a 60 s TTL and count the seconds the next click gets 409; " +
    "then try a TTL of 500 ms with the safeguards off.",
  async run(lab) {
    const sample = await sampleSwitchDurations(lab);
    const sorted = [...sample.durations].sort((a, b) => a - b);
    const sweep = sweptTtlsMs.map((ttlMs) => {
      // A switch that outlives its TTL has its lease expire under it: another switch may take it over.
      const outlived = sample.durations.filter((duration) => duration > ttlMs).length;
      return { ttlMs, switchesOutlivingTtl: outlived, share: outlived / sampledSwitches, lockedAfterCrashMs: ttlMs };
    });
    const switchP999Ms = 2 * callP9995Ms + latency.getMs + sample.slowestDatabaseMs;
    // 20% margin, rounded up to 100 ms.
    const recommendedTtlMs = Math.ceil((switchP999Ms * 1.2) / 100) * 100;
    const crash = await crashUnderLongTtl(lab);
    const shares = sweep.map((point) => point.share);
    const asExpected =
      sample.statuses.every((status) => status === 200) &&
      shares[0]! > 0 &&
      shares.at(-1) === 0 &&
      shares.every((share, index) => index === 0 || share <= shares[index - 1]!) &&
      recommendedTtlMs > sorted.at(-1)! &&
      recommendedTtlMs < longTtlMs &&
      crash.crashed.problemType === "operation-crashed" &&
      crash.refusedMeanwhile.status === 409 &&
      crash.lockedOutMs >= longTtlMs * 0.9 &&
      crash.next.status === 200 &&
      crash.recoveredBy === crash.next.operationId;
    return {
      observed: {
        longTtlMs,
        provider: { callMedianMs: latency.medianMs, callP99Ms: latency.p99Ms, callP9995Ms, getMs: latency.getMs },
        switchDurationMs: {
          switches: sampledSwitches,
          median: percentile(sorted, 0.5),
          p90: percentile(sorted, 0.9),
          max: sorted.at(-1),
        },
        slowestDatabaseMs: sample.slowestDatabaseMs,
        sweep,
        switchP999Ms,
        recommendedTtlMs,
        crash,
      },
      asExpected,
      explanation: explain({ sample, sorted, sweep, switchP999Ms, recommendedTtlMs, crash }, asExpected),
    };
  },
};
