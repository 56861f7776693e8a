"use client";

import { useQuery } from "@tanstack/react-query";
import { instancesQuery } from "./queries";

/**
 * With several app instances: where the next "Make primary" goes. A peer is reached through this instance
 * (the relay), since a request straight to another port is cross-origin; after one click, back to this one.
 */
export function InstancePicker({ peer, onChange }: { peer: number | null; onChange: (peer: number | null) => void }) {
  const instances = useQuery(instancesQuery());
  if (!instances.data || instances.data.peers.length === 0) return null;
  return (
    <fieldset className="instance-picker">
      <legend>Send the next click to</legend>
      <label>
        <input type="radio" name="next-click-instance" checked={peer === null} onChange={() => onChange(null)} />
        this instance ({instances.data.instance})
      </label>
      {instances.data.peers.map((each) => (
        <label key={each.peer}>
          <input
            type="radio"
            name="next-click-instance"
            checked={peer === each.peer}
            onChange={() => onChange(each.peer)}
          />
          the instance at {each.url}
        </label>
      ))}
    </fieldset>
  );
}
