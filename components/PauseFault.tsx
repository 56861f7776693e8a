"use client";

import { useState } from "react";
import { bounds, stallPoints } from "@/lib/lab/settings-schema";
import type { LabSettings, StallPoint } from "./api";
import { Field, NumberField } from "./fields";

type Stall = LabSettings["faults"]["stall"];

const stallLabels: Record<StallPoint, string> = {
  acquired: "after acquiring the lease",
  unlinked: "after the unlink",
  linked: "after the link (before the save)",
  saved: "after the save (before the release)",
  save: "right before the save (after its last check)",
};

/** A one-shot pause of the next operation, where and how long; what is armed, and its disarm. */
export function PauseFault({ armed, onArm }: { armed: Stall; onArm: (stall: Stall) => void }) {
  const [at, setAt] = useState<StallPoint>("unlinked");
  const [ms, setMs] = useState(15_000);
  return (
    <>
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
        <button type="button" className="quiet" onClick={() => onArm({ at, ms })}>
          Arm the pause
        </button>
        {armed && (
          <span role="status">
            Armed: {armed.ms} ms {stallLabels[armed.at]}{" "}
            <button type="button" className="quiet" onClick={() => onArm(null)}>
              Disarm
            </button>
          </span>
        )}
      </div>
    </>
  );
}
