"use client";

import { bounds } from "@/lib/lab/settings-schema";
import type { ChaosField, Scoped } from "./chaos-scope";
import { Field, NumberField } from "./fields";

const rateFields: { field: ChaosField; label: string }[] = [
  { field: "failureRate", label: "Error answers (%)" },
  { field: "networkErrorRate", label: "Network errors (%)" },
  { field: "timeoutRate", label: "Timeouts: hang until the caller gives up (%)" },
  { field: "rateLimitRate", label: "429 rate limited (%)" },
  { field: "appliedLateRate", label: "Applied but answered late (%)" },
];

/** The provider's failures in one scope: each kind's rate in percent, the error status, 429's Retry-After. */
export function FailureFields({ chaos, onPatch }: { chaos: Scoped; onPatch: (patch: unknown) => void }) {
  const { scope, provider, valueOf, inherited, nullable, patchOf } = chaos;
  return (
    <>
      {rateFields.map(({ field, label }) => {
        const value = valueOf(field) as number | null;
        return (
          <NumberField
            key={`${scope}-${field}`}
            label={label}
            value={value === null ? null : Math.round(value * 100)}
            placeholder={`inherits ${Math.round((inherited(field) as number) * 100)}`}
            nullable={nullable}
            min={0}
            max={100}
            step={5}
            onCommit={(percent) => onPatch(patchOf(field, percent === null ? null : percent / 100))}
          />
        );
      })}
      <Field label="Error status">
        {(id) => (
          <select
            id={id}
            value={String(valueOf("errorStatus") ?? "")}
            onChange={(event) =>
              onPatch(patchOf("errorStatus", event.target.value ? Number(event.target.value) : null))
            }
          >
            {nullable && <option value="">inherit ({provider.errorStatus})</option>}
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
        nullable={nullable}
        {...bounds.retryAfterSeconds}
        step={1}
        onCommit={(value) => onPatch(patchOf("retryAfterSeconds", value))}
      />
    </>
  );
}
