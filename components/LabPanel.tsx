"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type ReactNode } from "react";
import { api, queryKeys, type LabSettings, type Strategy } from "./api";

type SettingsPatch = Partial<Omit<LabSettings, "provider">> & { provider?: Partial<LabSettings["provider"]> };

const strategyLabels: Record<Strategy, string> = {
  lease: "Lease lock (locked_at on the row)",
  none: "No lock (the race is visible)",
};

export function LabPanel() {
  const queryClient = useQueryClient();
  // Polled, so a change made in another tab or app instance shows up here too.
  const settings = useQuery({ queryKey: queryKeys.lab, queryFn: () => api<LabSettings>("/api/lab"), refetchInterval: 2000 });
  const update = useMutation({
    mutationFn: (patch: SettingsPatch) => api<LabSettings>("/api/lab", { method: "PUT", body: JSON.stringify(patch) }),
    onSuccess: (next) => queryClient.setQueryData(queryKeys.lab, next),
  });
  const reset = useMutation({
    mutationFn: () => api<void>("/api/lab/reset", { method: "POST" }),
    onSuccess: () => queryClient.invalidateQueries(),
  });

  if (!settings.data) return <section className="card">{settings.error ? settings.error.message : "Loading the lab…"}</section>;
  const current = settings.data;

  return (
    <section className="card" aria-labelledby="lab-heading">
      <h2 id="lab-heading">Lab controls</h2>
      <Field label="Strategy">
        {(id) => (
          <select id={id} value={current.strategy} onChange={(event) => update.mutate({ strategy: event.target.value as Strategy })}>
            {Object.entries(strategyLabels).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <NumberSetting label="Lease TTL (ms)" value={current.leaseTtlMs} min={500} max={120000} step={500} onCommit={(leaseTtlMs) => update.mutate({ leaseTtlMs })} />
      <NumberSetting label="Provider latency per call (ms)" value={current.provider.latencyMs} min={0} max={30000} step={100} onCommit={(latencyMs) => update.mutate({ provider: { latencyMs } })} />
      <NumberSetting label="Latency jitter ± (ms)" value={current.provider.jitterMs} min={0} max={10000} step={50} onCommit={(jitterMs) => update.mutate({ provider: { jitterMs } })} />
      <NumberSetting
        label="Provider failure rate (%)"
        value={Math.round(current.provider.failureRate * 100)}
        min={0}
        max={100}
        step={5}
        onCommit={(percent) => update.mutate({ provider: { failureRate: percent / 100 } })}
      />
      <Field label="Client guard (disable buttons while a request is pending)">
        {(id) => <input id={id} type="checkbox" checked={current.clientGuard} onChange={(event) => update.mutate({ clientGuard: event.target.checked })} />}
      </Field>
      {update.error && <p role="alert">{update.error.message}</p>}
      <div className="row">
        <button type="button" onClick={() => reset.mutate()} disabled={reset.isPending}>
          Reset the lab
        </button>
        <a href="/" target="_blank" rel="noopener">
          Open a second tab
        </a>
      </div>
    </section>
  );
}

function Field({ label, children }: { label: string; children: (id: string) => ReactNode }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id)}
    </div>
  );
}

/** A number edited freely and sent when the field is left or Enter is pressed. */
function NumberSetting(props: { label: string; value: number; min: number; max: number; step: number; onCommit: (value: number) => void }) {
  const [draft, setDraft] = useState<string | null>(null);
  const commit = () => {
    if (draft === null) return;
    const value = Number(draft);
    setDraft(null);
    if (draft.trim() !== "" && Number.isFinite(value) && value !== props.value) props.onCommit(value);
  };
  return (
    <Field label={props.label}>
      {(id) => (
        <input
          id={id}
          type="number"
          min={props.min}
          max={props.max}
          step={props.step}
          value={draft ?? String(props.value)}
          onChange={(event) => setDraft(event.target.value)}
          onBlur={commit}
          onKeyDown={(event) => event.key === "Enter" && commit()}
        />
      )}
    </Field>
  );
}
