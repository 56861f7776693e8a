"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { bounds } from "@/lib/lab/settings-schema";
import { latencyModes, providerEndpoints, scriptedOutcomes } from "@/lib/provider-sim/chaos-settings";
import type { LabSettings, ProviderEndpoint, ScriptedOutcome } from "./api";
import { CheckboxField, Field, NumberField } from "./fields";
import { presetsQuery } from "./queries";
import { useLabSettings } from "./useLab";

type Scope = "all" | ProviderEndpoint;
type ChaosField = keyof LabSettings["provider"]["endpoints"]["link"];
type LatencyMode = LabSettings["provider"]["latencyMode"];

const latencyModeLabels: Record<LatencyMode, string> = {
  fixed: "fixed ± jitter",
  uniform: "uniform between two bounds",
  longTail: "long tail (median and p99)",
};
const rateFields: { field: ChaosField; label: string }[] = [
  { field: "failureRate", label: "Error answers (%)" },
  { field: "networkErrorRate", label: "Network errors (%)" },
  { field: "timeoutRate", label: "Timeouts: hang until the caller gives up (%)" },
  { field: "rateLimitRate", label: "429 rate limited (%)" },
  { field: "appliedLateRate", label: "Applied but answered late (%)" },
];
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

export function ChaosPanel() {
  const { settings, update } = useLabSettings();
  const presets = useQuery(presetsQuery());
  const [scope, setScope] = useState<Scope>("all");
  if (!settings) return null;

  const provider = settings.provider;
  const overrides = scope === "all" ? null : provider.endpoints[scope];
  /** The value shown for a field in this scope: an endpoint's own override, or null when it inherits. */
  const valueOf = (field: ChaosField) => (overrides ? overrides[field] : provider[field]);
  const inherited = (field: ChaosField) => provider[field];
  const patch = (field: ChaosField, value: unknown) =>
    update.mutate({ provider: scope === "all" ? { [field]: value } : { endpoints: { [scope]: { [field]: value } } } });
  const latencyMode = (valueOf("latencyMode") ?? provider.latencyMode) as LatencyMode;

  return (
    <section className="card" aria-labelledby="chaos-heading">
      <h2 id="chaos-heading">Break the provider</h2>
      <Field label="Presets">
        {(id) => (
          <select
            id={id}
            value=""
            onChange={(event) => {
              const preset = presets.data?.presets.find((each) => each.name === event.target.value);
              if (preset) update.mutate(preset.settings);
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
      <CheckboxField
        label="Enforce fencing tokens"
        hint="refuse a call whose token is older than one already seen for the account"
        checked={provider.enforceFencing}
        onToggle={(checked) => update.mutate({ provider: { enforceFencing: checked } })}
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
      <Field label="Latency">
        {(id) => (
          <select
            id={id}
            value={overrides && overrides.latencyMode === null ? "" : latencyMode}
            onChange={(event) => patch("latencyMode", event.target.value || null)}
          >
            {overrides && <option value="">inherit ({provider.latencyMode})</option>}
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
          nullable={scope !== "all"}
          {...bounds.milliseconds}
          step={50}
          onCommit={(value) => patch(field, value)}
        />
      ))}
      {rateFields.map(({ field, label }) => {
        const value = valueOf(field) as number | null;
        return (
          <NumberField
            key={`${scope}-${field}`}
            label={label}
            value={value === null ? null : Math.round(value * 100)}
            placeholder={`inherits ${Math.round((inherited(field) as number) * 100)}`}
            nullable={scope !== "all"}
            min={0}
            max={100}
            step={5}
            onCommit={(percent) => patch(field, percent === null ? null : percent / 100)}
          />
        );
      })}
      <Field label="Error status">
        {(id) => (
          <select
            id={id}
            value={String(valueOf("errorStatus") ?? "")}
            onChange={(event) => patch("errorStatus", event.target.value ? Number(event.target.value) : null)}
          >
            {overrides && <option value="">inherit ({provider.errorStatus})</option>}
            <option value="500">500</option>
            <option value="503">503</option>
          </select>
        )}
      </Field>
      <NumberField
        key={`${scope}-retryAfterSeconds`}
        label="Retry-After on 429 (s)"
        value={valueOf("retryAfterSeconds") as number | null}
        placeholder={`inherits ${provider.retryAfterSeconds}`}
        nullable={scope !== "all"}
        {...bounds.retryAfterSeconds}
        step={1}
        onCommit={(value) => patch("retryAfterSeconds", value)}
      />
      <NumberField
        label="Random seed"
        hint="empty: a new random run each time"
        value={provider.seed}
        placeholder="random"
        nullable
        {...bounds.seed}
        step={1}
        onCommit={(seed) => update.mutate({ provider: { seed } })}
      />
      <h3>Scripted one-shot outcomes</h3>
      <p className="explanation">
        Each queued outcome is used by exactly one call to that endpoint, before any random roll.
      </p>
      {providerEndpoints.map((endpoint) => (
        <ScriptRow
          key={endpoint}
          endpoint={endpoint}
          queue={provider.script[endpoint]}
          onChange={(queue) => update.mutate({ provider: { script: { [endpoint]: queue } } })}
        />
      ))}
      {update.error && <p role="alert">{update.error.message}</p>}
    </section>
  );
}

function ScriptRow({
  endpoint,
  queue,
  onChange,
}: {
  endpoint: ProviderEndpoint;
  queue: ScriptedOutcome[];
  onChange: (queue: ScriptedOutcome[]) => void;
}) {
  const [next, setNext] = useState<ScriptedOutcome>("ok");
  return (
    <div className="script-row">
      <span className="script-endpoint">{endpoint}</span>
      <span className="script-queue" aria-label={`queued outcomes for ${endpoint}`}>
        {queue.length === 0 ? <em>empty</em> : queue.map((outcome, index) => <code key={index}>{outcome}</code>)}
      </span>
      <select
        aria-label={`outcome to queue for ${endpoint}`}
        value={next}
        onChange={(event) => setNext(event.target.value as ScriptedOutcome)}
      >
        {scriptedOutcomes.map((outcome) => (
          <option key={outcome} value={outcome}>
            {outcome}
          </option>
        ))}
      </select>
      <button
        type="button"
        className="quiet"
        onClick={() => onChange([...queue, next])}
        disabled={queue.length >= bounds.scriptLength}
      >
        Queue
      </button>
      <button type="button" className="quiet" onClick={() => onChange([])} disabled={queue.length === 0}>
        Clear
      </button>
    </div>
  );
}
