"use client";

import type { ReplayHandle } from "./RunReplay";
import type { RunRecord } from "./types";
import { speeds, type usePlayback } from "./usePlayback";

const seconds = (at: number, from: number): string => `${((at - from) / 1000).toFixed(3)} s`;

/** "Previous fact", "Next fact", and which fact the replay is at. */
function FactSteps({ count, current, stepper }: { count: number; current: number | null; stepper: ReplayHandle }) {
  return (
    <div className="fact-steps">
      <button type="button" onClick={() => stepper.previousFact()} disabled={current === null || current === 0}>
        <span aria-hidden="true">◀ </span>Previous fact
      </button>
      <button
        type="button"
        onClick={() => stepper.nextFact()}
        disabled={count === 0 || (current !== null && current + 1 >= count)}
      >
        Next fact<span aria-hidden="true"> ▶</span>
      </button>
      <span className="replay-fact" aria-live="polite">
        {count === 0
          ? "No numbered fact"
          : current === null
            ? `Before fact 1 of ${count}`
            : `Fact ${current + 1} of ${count}`}
      </span>
    </div>
  );
}

function SpeedChoice({ speed, setSpeed }: { speed: number; setSpeed: (speed: number) => void }) {
  return (
    <label>
      Speed{" "}
      <select value={speed} onChange={(event) => setSpeed(Number(event.target.value))}>
        {speeds.map((option, index) => (
          <option key={option.label} value={index}>
            {option.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Step between the facts, play, and scrub every recorded moment with the slider. */
export function ReplayControls({
  run,
  span: { from, to },
  at,
  current,
  stepper,
  playback,
  onScrub,
}: {
  run: RunRecord;
  span: { from: number; to: number };
  at: number;
  current: number | null;
  stepper: ReplayHandle;
  playback: ReturnType<typeof usePlayback>;
  onScrub: (moment: number) => void;
}) {
  const { playing, setPlaying, speed, setSpeed } = playback;
  return (
    <div className="replay-controls" role="group" aria-label="Replay">
      <FactSteps count={run.steps.length} current={current} stepper={stepper} />
      <button
        type="button"
        className="quiet"
        aria-pressed={playing}
        onClick={() => {
          // From the moment shown (the start again, at the end), no longer at a fact.
          if (!playing) onScrub(at >= to ? from : at);
          setPlaying(!playing);
        }}
      >
        {playing ? "Pause" : "Play"}
      </button>
      <SpeedChoice speed={speed} setSpeed={setSpeed} />
      <label className="replay-slider">
        <span>Moment</span>
        <input
          type="range"
          min={from}
          max={to}
          step={1}
          value={at}
          aria-valuetext={seconds(at, from)}
          onChange={(event) => onScrub(Number(event.target.value))}
        />
      </label>
      <span className="replay-at">
        {seconds(at, from)} of {seconds(to, from)}
      </span>
    </div>
  );
}
