import { describe, expect, it } from "vitest";
import { defaultProviderSettings, effectiveChaos, type Chaos } from "./chaos-settings";
import { randomForDraw, rollOutcome, sampleLatency, seededRandom } from "./chaos";

const calm: Chaos = effectiveChaos(defaultProviderSettings, "link");
const samples = (chaos: Chaos, count: number) => {
  const random = seededRandom(42);
  return Array.from({ length: count }, () => sampleLatency(chaos, random)).sort((a, b) => a - b);
};

describe("the provider's dice", () => {
  it("repeats itself for the same seed and draw, and differs across draws", () => {
    const run = (seed: number) => Array.from({ length: 5 }, (_, draw) => randomForDraw(seed, draw)());
    expect(run(7)).toEqual(run(7));
    expect(new Set(run(7)).size).toBe(5);
    expect(run(7)).not.toEqual(run(8));
  });

  it("keeps fixed latency within the jitter", () => {
    const latencies = samples({ ...calm, latencyMode: "fixed", latencyMs: 500, jitterMs: 100 }, 1000);
    expect(latencies[0]).toBeGreaterThanOrEqual(400);
    expect(latencies.at(-1)).toBeLessThanOrEqual(600);
  });

  it("keeps uniform latency between its bounds and spreads it", () => {
    const latencies = samples({ ...calm, latencyMode: "uniform", minLatencyMs: 100, maxLatencyMs: 300 }, 1000);
    expect(latencies[0]).toBeGreaterThanOrEqual(100);
    expect(latencies.at(-1)).toBeLessThanOrEqual(300);
    expect(latencies[500]).toBeGreaterThan(180);
    expect(latencies[500]).toBeLessThan(220);
  });

  it("gives the long tail the configured median and 99th percentile", () => {
    const latencies = samples({ ...calm, latencyMode: "longTail", medianLatencyMs: 200, p99LatencyMs: 2000 }, 20_000);
    expect(latencies[10_000]).toBeGreaterThan(190);
    expect(latencies[10_000]).toBeLessThan(210);
    expect(latencies[19_800]).toBeGreaterThan(1800);
    expect(latencies[19_800]).toBeLessThan(2200);
  });

  it("rolls each outcome at its configured rate", () => {
    const chaos = {
      ...calm,
      networkErrorRate: 0.1,
      timeoutRate: 0.1,
      rateLimitRate: 0.1,
      failureRate: 0.2,
      errorStatus: 500 as const,
      appliedLateRate: 0.1,
    };
    const random = seededRandom(1);
    const counts: Record<string, number> = {};
    for (let i = 0; i < 10_000; i++) {
      const outcome = rollOutcome(chaos, random);
      counts[outcome] = (counts[outcome] ?? 0) + 1;
    }
    const share = (outcome: string) => (counts[outcome] ?? 0) / 10_000;
    expect(share("network-error")).toBeCloseTo(0.1, 1);
    expect(share("timeout")).toBeCloseTo(0.1, 1);
    expect(share("429")).toBeCloseTo(0.1, 1);
    expect(share("500")).toBeCloseTo(0.2, 1);
    expect(share("applied-late")).toBeCloseTo(0.1, 1);
    expect(share("ok")).toBeCloseTo(0.4, 1);
    expect(counts["503"]).toBeUndefined();
  });
});
