"use client";

import { useQuery } from "@tanstack/react-query";
import type { LabPreset, LabSettings } from "./api";
import { ChaosPanel } from "./ChaosPanel";
import { LabPanel } from "./LabPanel";
import { PoolPanel } from "./PoolPanel";
import { labSettingsQuery, presetsQuery } from "./queries";

/** Whether every value the preset sets is the value in force. */
function matches(wanted: unknown, actual: unknown): boolean {
  if (wanted === null || typeof wanted !== "object") return wanted === actual;
  if (actual === null || typeof actual !== "object") return false;
  return Object.entries(wanted).every(([key, value]) => matches(value, (actual as Record<string, unknown>)[key]));
}

const activePreset = (presets: LabPreset[] | undefined, settings: LabSettings | undefined): string =>
  (settings && presets?.find((preset) => matches(preset.settings, settings))?.name) ?? "custom";

/** The lab's controls, folded away: the strategy and its settings, the pool, the provider's faults. */
export function LabControls() {
  const settings = useQuery(labSettingsQuery());
  const presets = useQuery(presetsQuery());
  return (
    <details className="card lab-controls">
      <summary>
        Lab controls — strategy <strong>{settings.data?.strategy ?? "…"}</strong>, preset{" "}
        <strong>{activePreset(presets.data?.presets, settings.data)}</strong>
      </summary>
      <div className="lab-grid">
        <LabPanel />
        {/* Under `transaction` the gauge is in the story instead. */}
        {settings.data?.strategy !== "transaction" && <PoolPanel />}
        <ChaosPanel />
      </div>
    </details>
  );
}
