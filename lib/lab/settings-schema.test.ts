import { describe, expect, it } from "vitest";
import { deepMerge } from "./deep-merge";
import { defaultLabSettings, labSettingsPatchSchema, type LabSettings } from "./settings-schema";

const applied = (patch: unknown): LabSettings =>
  deepMerge(defaultLabSettings, labSettingsPatchSchema.parse(patch) as Partial<LabSettings>);

describe("a patch of the lab's settings", () => {
  it("takes an endpoint's overrides as null: every one of them null, so the endpoint inherits every knob", () => {
    const overridden = applied({ provider: { endpoints: { link: { failureRate: 1, latencyMs: 5 } } } });
    expect(overridden.provider.endpoints.link).toMatchObject({ failureRate: 1, latencyMs: 5 });
    const cleared = deepMerge(overridden, labSettingsPatchSchema.parse({ provider: { endpoints: { link: null } } }));
    expect(cleared.provider.endpoints).toEqual(defaultLabSettings.provider.endpoints);
  });

  it("still names the field of a bad override, and takes null for no other object", () => {
    const bad = labSettingsPatchSchema.safeParse({ provider: { endpoints: { link: { failureRate: 2 } } } });
    expect(bad.error?.issues.map((issue) => issue.path.join("."))).toEqual(["provider.endpoints.link.failureRate"]);
    expect(labSettingsPatchSchema.safeParse({ provider: null }).success).toBe(false);
    expect(labSettingsPatchSchema.safeParse({ provider: { endpoints: null } }).success).toBe(false);
  });
});
