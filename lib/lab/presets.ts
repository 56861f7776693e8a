/**
 * Named provider set-ups for the lab's "presets" menu. Each is a complete provider patch: it starts
 * from a calm provider (no overrides, no script) so that presets do not pile up on each other.
 */
import { defaultLabSettings, type LabSettings } from "./settings-schema";

type ProviderSettings = LabSettings["provider"];

export interface LabPreset {
  name: string;
  description: string;
  settings: { provider: ProviderSettings };
}

const calm: ProviderSettings = { ...defaultLabSettings.provider };

function preset(name: string, description: string, changes: Partial<ProviderSettings>): LabPreset {
  return { name, description, settings: { provider: { ...calm, ...changes } } };
}

const linkOverrides = (overrides: Partial<ProviderSettings["endpoints"]["link"]>): ProviderSettings["endpoints"] => ({
  ...calm.endpoints,
  link: { ...calm.endpoints.link, ...overrides },
});

export const labPresets: LabPreset[] = [
  preset("Calm provider", "800 ms per call, nothing fails.", {}),
  preset("Slow provider", "A long tail: median 1.5 s, p99 6 s. Slow enough to see two tabs collide.", {
    latencyMode: "longTail",
    medianLatencyMs: 1_500,
    p99LatencyMs: 6_000,
  }),
  preset("Flaky link", "Half of the link calls answer 503: the unlink before them is left half-done.", {
    endpoints: linkOverrides({ failureRate: 0.5, errorStatus: 503 }),
  }),
  preset("Timeout after unlink", "The next unlink succeeds, the link after it hangs until the deadline.", {
    script: { get: [], unlink: ["ok"], link: ["timeout"] },
  }),
  preset("Rate limited", "Half of all calls answer 429 with Retry-After: 1.", {
    rateLimitRate: 0.5,
    retryAfterSeconds: 1,
  }),
  preset("Applied but answered late", "The next link is committed at the provider but answered after the deadline.", {
    script: { get: [], unlink: [], link: ["applied-late"] },
  }),
  preset("Network trouble", "One call in five never gets an HTTP answer.", { networkErrorRate: 0.2 }),
];
