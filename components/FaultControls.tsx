"use client";

import { useState } from "react";
import { bounds, crashPoints, stallPoints, type CrashPoint } from "@/lib/lab/settings-schema";
import type { StallPoint } from "./api";
import { Field, NumberField } from "./fields";
import { useLabSettings } from "./useLab";

const stallLabels: Record<StallPoint, string> = {
  acquired: "after acquiring the lease",
  unlinked: "after the unlink",
  linked: "after the link (before the save)",
  saved: "after the save (before the release)",
  save: "right before the save (after its last check)",
};

const crashLabels: Record<CrashPoint, string> = {
  "after-acquire": "after acquiring the lease",
  "after-unlink": "after the unlink",
  "during-link": "during the link (its call at the provider)",
  "after-link": "after the link (before the save)",
};

/** Faults in the app's own code: a one-shot pause (as a GC pause would), a one-shot crash, failing releases. */
export function FaultControls() {
  const { settings, update } = useLabSettings();
  const [at, setAt] = useState<StallPoint>("unlinked");
  const [ms, setMs] = useState(15_000);
  const [crashAt, setCrashAt] = useState<CrashPoint>("after-unlink");
  if (!settings) return null;
  const armed = settings.faults.stall;
  const crashArmed = settings.faults.crash;

  return (
    <fieldset className="faults">
      <legend>Faults in this app</legend>
      <Field label="Pause the next operation">
        {(id) => (
          <select id={id} value={at} onChange={(event) => setAt(event.target.value as StallPoint)}>
            {stallPoints.map((point) => (
              <option key={point} value={point}>
                {stallLabels[point]}
              </option>
            ))}
          </select>
        )}
      </Field>
      <NumberField
        label="for (ms)"
        value={ms}
        {...bounds.milliseconds}
        step={500}
        onCommit={(value) => setMs(value ?? 0)}
      />
      <div className="row">
        <button type="button" className="quiet" onClick={() => update.mutate({ faults: { stall: { at, ms } } })}>
          Arm the pause
        </button>
        {armed && (
          <span role="status">
            Armed: {armed.ms} ms {stallLabels[armed.at]}{" "}
            <button type="button" className="quiet" onClick={() => update.mutate({ faults: { stall: null } })}>
              Disarm
            </button>
          </span>
        )}
      </div>
      <Field label="Crash the next operation" hint="it stops dead: no release, no renewal; the TTL frees the lease">
        {(id) => (
          <select id={id} value={crashAt} onChange={(event) => setCrashAt(event.target.value as CrashPoint)}>
            {crashPoints.map((point) => (
              <option key={point} value={point}>
                {crashLabels[point]}
              </option>
            ))}
          </select>
        )}
      </Field>
      <div className="row">
        <button type="button" className="quiet" onClick={() => update.mutate({ faults: { crash: crashAt } })}>
          Arm the crash
        </button>
        {crashArmed && (
          <span role="status">
            Crash armed: {crashLabels[crashArmed]}{" "}
            <button type="button" className="quiet" onClick={() => update.mutate({ faults: { crash: null } })}>
              Disarm the crash
            </button>
          </span>
        )}
      </div>
      <NumberField
        label="Failing release attempts"
        hint="4 or more: every attempt fails and the TTL frees the lease"
        value={settings.faults.releaseFailures}
        {...bounds.releaseFailures}
        step={1}
        onCommit={(releaseFailures) => update.mutate({ faults: { releaseFailures } })}
      />
    </fieldset>
  );
}
