"use client";

import { bounds } from "@/lib/lab/settings-schema";
import { CrashFault } from "./CrashFault";
import { NumberField } from "./fields";
import { PauseFault } from "./PauseFault";
import { useLabSettings } from "./useLab";

/** Faults in the app's own code: a one-shot pause (as a GC pause would), a one-shot crash, failing releases. */
export function FaultControls() {
  const { settings, update } = useLabSettings();
  if (!settings) return null;
  return (
    <fieldset className="faults">
      <legend>Faults in this app</legend>
      <PauseFault armed={settings.faults.stall} onArm={(stall) => update.mutate({ faults: { stall } })} />
      <CrashFault armed={settings.faults.crash} onArm={(crash) => update.mutate({ faults: { crash } })} />
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
