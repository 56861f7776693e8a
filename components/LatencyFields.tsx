"use client";

import { bounds } from "@/lib/lab/settings-schema";
import { latencyModes } from "@/lib/provider-sim/chaos-settings";
import type { LabSettings } from "./api";
import type { ChaosField, Scoped } from "./chaos-scope";
import { Field, NumberField } from "./fields";

type LatencyMode = LabSettings["provider"]["latencyMode"];

const latencyModeLabels: Record<LatencyMode, string> = {
  fixed: "fixed ± jitter",
  uniform: "uniform between two bounds",
  longTail: "long tail (median and p99)",
};
const latencyFields: Record<LatencyMode, { field: ChaosField; label: string }[]> = {
  fixed: [
    { field: "latencyMs", label: "Latency (ms)" },
    { field: "jitterMs", label: "Jitter ± (ms)" },
  ],
  uniform: [
    { field: "minLatencyMs", label: "Minimum (ms)" },
    { field: "maxLatencyMs", label: "Maximum (ms)" },
  ],
  longTail: [
    { field: "medianLatencyMs", label: "Median (ms)" },
    { field: "p99LatencyMs", label: "99th percentile (ms)" },
  ],
};

/** The provider's latency in one scope: its distribution, then that distribution's parameters. */
export function LatencyFields({ chaos, onPatch }: { chaos: Scoped; onPatch: (patch: unknown) => void }) {
  const { scope, provider, valueOf, inherited, nullable, patchOf } = chaos;
  const latencyMode = (valueOf("latencyMode") ?? provider.latencyMode) as LatencyMode;
  return (
    <>
      <Field label="Latency">
        {(id) => (
          <select
            id={id}
            value={nullable && valueOf("latencyMode") === null ? "" : latencyMode}
            onChange={(event) => onPatch(patchOf("latencyMode", event.target.value || null))}
          >
            {nullable && <option value="">inherit ({provider.latencyMode})</option>}
            {latencyModes.map((mode) => (
              <option key={mode} value={mode}>
                {latencyModeLabels[mode]}
              </option>
            ))}
          </select>
        )}
      </Field>
      {latencyFields[latencyMode].map(({ field, label }) => (
        <NumberField
          key={`${scope}-${field}`}
          label={label}
          value={valueOf(field) as number | null}
          placeholder={`inherits ${String(inherited(field))}`}
          nullable={nullable}
          {...bounds.milliseconds}
          step={50}
          onCommit={(value) => onPatch(patchOf(field, value))}
        />
      ))}
    </>
  );
}
