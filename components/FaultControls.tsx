"use client";

import { useState } from "react";
import { bounds, stallPoints } from "@/lib/lab/settings-schema";
import type { StallPoint } from "./api";
import { Field, NumberField } from "./fields";
import { useLabSettings } from "./useLab";

const stallLabels: Record<StallPoint, string> = {
  acquired: "after acquiring the lease",
  unlinked: "after the unlink",
  linked: "after the link (before the save)",
  saved: "after the save (before the release)",
};

/** Faults in the app's own code: a one-shot pause (as a GC pause would) and failing releases. */
export function FaultControls() {
  const { settings, update } = useLabSettings();
  const [at, setAt] = useState<StallPoint>("unlinked");
  const [ms, setMs] = useState(15_000);
  if (!settings) return null;
  const armed = settings.faults.stall;

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
