"use client";

import { useCallback, useImperativeHandle, useMemo, useState } from "react";
import { laneLabels } from "@/lib/lab/experiments/run-facts";
import { TimelineChart } from "../TimelineChart";
import { factIndexAt, factMarks, foldsByDefault, spanOf } from "./replay";
import { ReplayControls } from "./ReplayControls";
import { ReplayState } from "./ReplayState";
import type { RunMarker, RunRecord } from "./types";
import { useDrawing } from "./useDrawing";
import { usePlayback } from "./usePlayback";

/** The explanation as short steps: one sentence a line. */
const sentences = (text: string): string[] => text.split(/(?<=[.!?])\s+(?=[A-Z0-9])/).filter(Boolean);

/** What a page (the presenter view's keyboard) can do with a replay: step its facts; false when there is none. */
export interface ReplayHandle {
  nextFact(): boolean;
  previousFact(): boolean;
}

/** The numbered facts, once: each a button that moves the replay to it; the current one is `aria-current`. */
function FactList({
  steps,
  current,
  goTo,
}: {
  steps: RunMarker[];
  current: number | null;
  goTo: (index: number) => void;
}) {
  if (steps.length === 0) return null;
  return (
    <>
      <h3>The facts on the picture</h3>
      <ol className="run-steps">
        {steps.map((step, index) => (
          <li key={step.n} value={step.n} aria-current={index === current ? "step" : undefined}>
            <button type="button" className="fact" onClick={() => goTo(index)}>
              {step.text}
            </button>
          </li>
        ))}
      </ol>
    </>
  );
}

/**
 * A saved run, replayed: the whole run drawn with the shared timeline (each variant a group under its
 * caption, each request named as the run named it, each cited fact a numbered marker), "Next fact" and
 * "Previous fact" to step between the facts (the current one highlighted on the picture, its caption beside
 * it), a slider to scrub every recorded moment, play in slow motion, and the lease, the provider's accounts
 * and the audit as they were at the moment shown.
 */
export function RunReplay({ run, title, ref }: { run: RunRecord; title: string; ref?: React.Ref<ReplayHandle> }) {
  const { from, to } = useMemo(() => spanOf(run), [run]);
  const labels = useMemo(() => laneLabels(run.history), [run]);
  const [at, setAt] = useState(to);
  // The fact stepped to, when it was (two facts at one moment are two steps); else the last one reached.
  const [pinned, setPinned] = useState<number | null>(null);
  const playback = usePlayback(to, setAt);
  const current = pinned ?? factIndexAt(run.steps, at);
  const goTo = useCallback(
    (index: number) => {
      playback.setPlaying(false);
      setPinned(index);
      setAt(Date.parse(run.steps[index]!.at));
    },
    [playback, run.steps],
  );
  const stepper = useMemo<ReplayHandle>(() => {
    const next = current === null ? 0 : current + 1;
    return {
      nextFact: () => next < run.steps.length && (goTo(next), true),
      previousFact: () => current !== null && current > 0 && (goTo(current - 1), true),
    };
  }, [current, goTo, run.steps.length]);
  useImperativeHandle(ref, () => stepper, [stepper]);
  const drawing = useDrawing(run, at);

  return (
    <div className="run-replay">
      <FoldToggles run={run} folded={drawing.folded} onToggle={drawing.toggle} />
      <TimelineChart
        label={title}
        lanes={drawing.lanes}
        at={at}
        groupOf={drawing.groupOf}
        laneCaption={drawing.laneCaption}
        // A fact is marked once the moment shown has reached it (at the run's first moment, nothing has happened).
        marks={factMarks(run.steps, at, from)}
        currentMark={current === null ? null : String(run.steps[current]!.n)}
      />
      <ReplayControls
        run={run}
        span={{ from, to }}
        at={at}
        current={current}
        stepper={stepper}
        playback={playback}
        onScrub={(moment) => {
          playback.setPlaying(false);
          setPinned(null);
          setAt(moment);
        }}
      />
      <ReplayState run={run} at={at} from={from} labels={labels} />
      <FactList steps={run.steps} current={current} goTo={goTo} />
      <Explanation text={run.explanation} />
    </div>
  );
}

function Explanation({ text }: { text: string }) {
  return (
    <>
      <h3>What happened, and why</h3>
      <ol className="explanation">
        {sentences(text).map((sentence, index) => (
          <li key={index}>{sentence}</li>
        ))}
      </ol>
    </>
  );
}

/** A button for each variant drawn folded (or unfolded again): its operations in one row, or one row each. */
function FoldToggles({
  run,
  folded,
  onToggle,
}: {
  run: RunRecord;
  folded: number[];
  onToggle: (index: number) => void;
}) {
  const foldable = foldsByDefault(run);
  if (foldable.length === 0) return null;
  return (
    <p className="fold-toggles">
      {foldable.map((index) => {
        const count = run.variants[index]!.operationIds.length;
        return (
          <button
            key={index}
            type="button"
            className="quiet"
            aria-expanded={!folded.includes(index)}
            onClick={() => onToggle(index)}
          >
            {folded.includes(index)
              ? `Show variant ${index + 1}'s ${count} operations, one row each`
              : `Fold variant ${index + 1} into one row`}
          </button>
        );
      })}
    </p>
  );
}
