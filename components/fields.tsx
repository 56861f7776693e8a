"use client";

import { useId, useState, type ReactNode } from "react";

export function Field({
  label,
  hint,
  children,
}: {
  label: string;
  hint?: string;
  children: (id: string) => ReactNode;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>
        {label}
        {hint && <small className="hint">{hint}</small>}
      </label>
      {children(id)}
    </div>
  );
}

/** A setting that is on or off, sent as soon as it is toggled. */
export function CheckboxField({
  label,
  hint,
  checked,
  onToggle,
}: {
  label: string;
  hint?: string;
  checked: boolean;
  onToggle: (checked: boolean) => void;
}) {
  return (
    <Field label={label} hint={hint}>
      {(id) => <input id={id} type="checkbox" checked={checked} onChange={(event) => onToggle(event.target.checked)} />}
    </Field>
  );
}

/**
 * A number edited freely and sent when the field is left or Enter is pressed. `value` null shows an
 * empty field with `placeholder` (an inherited value); clearing the field commits null when `nullable`.
 */
export function NumberField(props: {
  label: string;
  hint?: string;
  value: number | null;
  placeholder?: string;
  min: number;
  max: number;
  step: number;
  nullable?: boolean;
  onCommit: (value: number | null) => void;
}) {
  const [draft, setDraft] = useState<string | null>(null);
  const commit = () => {
    if (draft === null) return;
    setDraft(null);
    if (draft.trim() === "") {
      if (props.nullable && props.value !== null) props.onCommit(null);
      return;
    }
    const value = Number(draft);
    if (Number.isFinite(value) && value !== props.value) props.onCommit(value);
  };
  return (
    <Field label={props.label} hint={props.hint}>
      {(id) => (
        <input
          id={id}
          type="number"
          min={props.min}
          max={props.max}
          step={props.step}
          placeholder={props.placeholder}
          value={draft ?? (props.value === null ? "" : String(props.value))}
          onChange={(event) => setDraft(event.target.value)}
          onBlur={commit}
          onKeyDown={(event) => event.key === "Enter" && commit()}
        />
      )}
    </Field>
  );
}
