"use client";

import { bounds } from "@/lib/lab/settings-schema";
import { FaultControls } from "./FaultControls";
import { CheckboxField, NumberField } from "./fields";
import { StrategyField } from "./StrategyField";
import { useLabSettings } from "./useLab";

/** The strategy and the settings of the app's own code: TTL, pool, safeguards, the ORM mapping, the guard, faults. */
export function LabPanel() {
  const { settings, error, update } = useLabSettings();

  if (!settings) return <section className="card">{error ? error.message : "Loading the lab…"}</section>;

  return (
    <section className="card" aria-labelledby="lab-heading">
      <h2 id="lab-heading">Strategy</h2>
      <StrategyField strategy={settings.strategy} onChange={(strategy) => update.mutate({ strategy })} />
      <NumberField
        label="Lease TTL (ms)"
        value={settings.leaseTtlMs}
        {...bounds.leaseTtlMs}
        step={500}
        onCommit={(leaseTtlMs) => update.mutate({ leaseTtlMs })}
      />
      <NumberField
        label="Connection pool size"
        value={settings.poolSize}
        {...bounds.poolSize}
        step={1}
        onCommit={(poolSize) => update.mutate({ poolSize })}
      />
      <CheckboxField
        label="Lease safeguards"
        hint="deadline inside the lease, renewal, checks before each step; off: the textbook lease"
        checked={settings.leaseSafeguards}
        onToggle={(checked) => update.mutate({ leaseSafeguards: checked })}
      />
      <CheckboxField
        label="Lock column mapped"
        hint="a rename saves every column it read, the lease's too (as an ORM mapping them does): it wipes a lease taken meanwhile"
        checked={settings.lockColumnMapped}
        onToggle={(checked) => update.mutate({ lockColumnMapped: checked })}
      />
      <CheckboxField
        label="Client guard"
        hint="disable the buttons while a request is pending"
        checked={settings.clientGuard}
        onToggle={(checked) => update.mutate({ clientGuard: checked })}
      />
      <FaultControls />
      {update.error && <p role="alert">{update.error.message}</p>}
      <div className="row">
        <a href="/" target="_blank" rel="noopener">
          Open a second tab
        </a>
      </div>
    </section>
  );
}
