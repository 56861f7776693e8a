import { describe, expect, it } from "vitest";
import { config } from "../core/config";
import { defaultLabSettings } from "../lab/settings-schema";

describe("the product's switch settings", () => {
  it("default to the lab's defaults, so that turning the lab off changes nothing a switch does", () => {
    expect(config.switch).toEqual({
      leaseTtlMs: defaultLabSettings.leaseTtlMs,
      providerApplyLimitMs: defaultLabSettings.provider.applyLimitMs,
      providerEnforcesFencing: defaultLabSettings.provider.enforceFencing,
      reconcileAfterMs: defaultLabSettings.reconcileAfterMs,
    });
    expect(defaultLabSettings.strategy).toBe("lease");
    expect(defaultLabSettings.leaseSafeguards).toBe(true);
    // The product's rename never maps the lock columns (lib/switch/service.ts).
    expect(defaultLabSettings.lockColumnMapped).toBe(false);
  });
});
