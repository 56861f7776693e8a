"use client";

import { useState } from "react";
import { bounds } from "@/lib/lab/settings-schema";
import { providerEndpoints } from "@/lib/provider-sim/chaos-settings";
import { ChaosPresets } from "./ChaosPresets";
import { scoped, type Scope } from "./chaos-scope";
import { FailureFields } from "./FailureFields";
import { CheckboxField, Field, NumberField } from "./fields";
import { LatencyFields } from "./LatencyFields";
import { ScriptedOutcomes } from "./ScriptedOutcomes";
import { useLabSettings } from "./useLab";

/**
 * "Break the provider": presets, fencing, then latency and failures for every endpoint or one endpoint's
 * overrides, the seed, and scripted one-shot outcomes.
 */
export function ChaosPanel() {
  const { settings, update } = useLabSettings();
  const [scope, setScope] = useState<Scope>("all");
  if (!settings) return null;
  const provider = settings.provider;
  const chaos = scoped(provider, scope);
  const patch = (value: unknown) => update.mutate(value);

  return (
    <section className="card" aria-labelledby="chaos-heading">
      <h2 id="chaos-heading">Break the provider</h2>
      <ChaosPresets onApply={patch} />
      <CheckboxField
        label="Enforce fencing tokens"
        hint="refuse a call whose token is older than one already seen for the account"
        checked={provider.enforceFencing}
        onToggle={(checked) => patch({ provider: { enforceFencing: checked } })}
      />
      <Field label="Settings below apply to">
        {(id) => (
          <select id={id} value={scope} onChange={(event) => setScope(event.target.value as Scope)}>
            <option value="all">every endpoint</option>
            {providerEndpoints.map((endpoint) => (
              <option key={endpoint} value={endpoint}>
                the {endpoint} endpoint only
              </option>
            ))}
          </select>
        )}
      </Field>
      {scope !== "all" && <p className="explanation">Empty fields inherit the value set for every endpoint.</p>}
      <LatencyFields chaos={chaos} onPatch={patch} />
      <FailureFields chaos={chaos} onPatch={patch} />
      <NumberField
        label="Random seed"
        hint="empty: a new random run each time"
        value={provider.seed}
        placeholder="random"
        nullable
        {...bounds.seed}
        step={1}
        onCommit={(seed) => patch({ provider: { seed } })}
      />
      <ScriptedOutcomes
        script={provider.script}
        onChange={(endpoint, queue) => patch({ provider: { script: { [endpoint]: queue } } })}
      />
      {update.error && <p role="alert">{update.error.message}</p>}
    </section>
  );
}
