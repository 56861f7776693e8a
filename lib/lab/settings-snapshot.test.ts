import { describe, expect, it } from "vitest";
import { defaultLabSettings } from "./settings-schema";
import { takeAnnouncement } from "./settings-snapshot";

describe("the settings this process heard", () => {
  it("take an announcement only when it is newer than the last taken: a late older one never undoes a change", () => {
    const slower = { ...defaultLabSettings, leaseTtlMs: 20_000 };
    const faster = { ...defaultLabSettings, leaseTtlMs: 2_000 };
    expect(takeAnnouncement({ settings: slower, revision: 100n })).toBe(true);
    expect(takeAnnouncement({ settings: faster, revision: 200n })).toBe(true);
    // The first change's announcement arriving again, or an older one arriving late.
    expect(takeAnnouncement({ settings: slower, revision: 200n })).toBe(false);
    expect(takeAnnouncement({ settings: slower, revision: 150n })).toBe(false);
  });
});
