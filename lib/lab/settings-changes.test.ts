import { describe, expect, it } from "vitest";
import { deepMerge } from "./deep-merge";
import { settingsChanges } from "./settings-changes";
import { defaultLabSettings, type LabSettings } from "./settings-schema";

const changed = (patch: unknown) => deepMerge<LabSettings>(defaultLabSettings, patch);

describe("settingsChanges", () => {
  it("finds nothing in the defaults", () => {
    expect(settingsChanges(defaultLabSettings)).toEqual([]);
  });

  it("names each changed leaf by its path, with the default beside it", () => {
    const settings = changed({
      strategy: "none",
      provider: { latencyMs: 2_000, endpoints: { unlink: { failureRate: 0.5 } } },
      faults: { stall: { at: "save", ms: 3_000 } },
    });
    expect(settingsChanges(settings)).toEqual([
      { path: "strategy", value: "none", defaultValue: "lease" },
      { path: "faults.stall", value: { at: "save", ms: 3_000 }, defaultValue: null },
      { path: "provider.latencyMs", value: 2_000, defaultValue: 800 },
      { path: "provider.endpoints.unlink.failureRate", value: 0.5, defaultValue: null },
    ]);
  });

  it("names a changed array once, whole", () => {
    const settings = changed({ provider: { script: { link: ["500", "ok"] } } });
    expect(settingsChanges(settings)).toEqual([
      { path: "provider.script.link", value: ["500", "ok"], defaultValue: [] },
    ]);
  });
});
