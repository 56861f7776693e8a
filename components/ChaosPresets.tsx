"use client";

import { useQuery } from "@tanstack/react-query";
import { Field } from "./fields";
import { presetsQuery } from "./queries";

/** Named provider set-ups: choosing one applies its settings. */
export function ChaosPresets({ onApply }: { onApply: (settings: unknown) => void }) {
  const presets = useQuery(presetsQuery());
  return (
    <Field label="Presets">
      {(id) => (
        <select
          id={id}
          value=""
          onChange={(event) => {
            const preset = presets.data?.presets.find((each) => each.name === event.target.value);
            if (preset) onApply(preset.settings);
          }}
        >
          <option value="">Choose a preset…</option>
          {presets.data?.presets.map((preset) => (
            <option key={preset.name} value={preset.name} title={preset.description}>
              {preset.name}: {preset.description}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
