"use client";

import { useState } from "react";
import { bounds } from "@/lib/lab/settings-schema";
import { providerEndpoints, scriptedOutcomes } from "@/lib/provider-sim/chaos-settings";
import type { LabSettings, ProviderEndpoint, ScriptedOutcome } from "./api";

/** One-shot outcomes queued per endpoint, each used by exactly one call before any random roll. */
export function ScriptedOutcomes({
  script,
  onChange,
}: {
  script: LabSettings["provider"]["script"];
  onChange: (endpoint: ProviderEndpoint, queue: ScriptedOutcome[]) => void;
}) {
  return (
    <>
      <h3>Scripted one-shot outcomes</h3>
      <p className="explanation">
        Each queued outcome is used by exactly one call to that endpoint, before any random roll.
      </p>
      {providerEndpoints.map((endpoint) => (
        <ScriptRow
          key={endpoint}
          endpoint={endpoint}
          queue={script[endpoint]}
          onChange={(queue) => onChange(endpoint, queue)}
        />
      ))}
    </>
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
