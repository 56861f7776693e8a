/**
 * The simulated provider's dice: which outcome a call gets and how long it takes. Pure functions of the
 * settings and a random source, so a seeded source makes a whole run repeatable.
 */
import type { Chaos, ScriptedOutcome } from "./chaos-settings";

export type Random = () => number;

/** mulberry32: small, fast, and good enough to roll a simulated provider's dice. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The random source for the `draw`-th call of a seeded run. */
export function randomForDraw(seed: number, draw: number): Random {
  return seededRandom(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(draw, 0xc2b2ae35));
}

/** One roll against the configured rates; what is left over is a normal answer. */
export function rollOutcome(chaos: Chaos, random: Random): ScriptedOutcome {
  const roll = random();
  const table: [number, ScriptedOutcome][] = [
    [chaos.networkErrorRate, "network-error"],
    [chaos.timeoutRate, "timeout"],
    [chaos.rateLimitRate, "429"],
    [chaos.failureRate, chaos.errorStatus === 500 ? "500" : "503"],
    [chaos.appliedLateRate, "applied-late"],
  ];
  let threshold = 0;
  for (const [rate, outcome] of table) {
    threshold += rate;
    if (roll < threshold) return outcome;
  }
  return "ok";
}

/** z-score of the 99th percentile of a standard normal distribution. */
const Z99 = 2.3263478740408408;

export function sampleLatency(chaos: Chaos, random: Random): number {
  switch (chaos.latencyMode) {
    case "fixed":
      return Math.max(0, Math.round(chaos.latencyMs + (random() * 2 - 1) * chaos.jitterMs));
    case "uniform":
      return Math.round(chaos.minLatencyMs + random() * (chaos.maxLatencyMs - chaos.minLatencyMs));
    case "longTail": {
      // Log-normal: its median is e^mu and its 99th percentile e^(mu + Z99·sigma).
      if (chaos.medianLatencyMs === 0) return 0;
      const mu = Math.log(chaos.medianLatencyMs);
      const sigma = Math.log(Math.max(chaos.p99LatencyMs, chaos.medianLatencyMs) / chaos.medianLatencyMs) / Z99;
      const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
      return Math.min(60_000, Math.round(Math.exp(mu + sigma * normal)));
    }
  }
}
