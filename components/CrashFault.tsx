"use client";

import { useState } from "react";
import { crashPoints, type CrashPoint } from "@/lib/lab/settings-schema";
import { Field } from "./fields";

const crashLabels: Record<CrashPoint, string> = {
  "after-acquire": "after acquiring the lease",
  "after-unlink": "after the unlink",
  "during-link": "during the link (its call at the provider)",
  "after-link": "after the link (before the save)",
};

/** A one-shot crash of the next operation (no release, no renewal), where; what is armed, and its disarm. */
export function CrashFault({ armed, onArm }: { armed: CrashPoint | null; onArm: (crash: CrashPoint | null) => void }) {
  const [crashAt, setCrashAt] = useState<CrashPoint>("after-unlink");
  return (
    <>
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
        <button type="button" className="quiet" onClick={() => onArm(crashAt)}>
          Arm the crash
        </button>
        {armed && (
          <span role="status">
            Crash armed: {crashLabels[armed]}{" "}
            <button type="button" className="quiet" onClick={() => onArm(null)}>
              Disarm the crash
            </button>
          </span>
        )}
      </div>
    </>
  );
}
