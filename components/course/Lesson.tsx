"use client";

import { useState } from "react";
import { Expected, PredictionForm, PredictionVerdict } from "../learn/Prediction";
import { NeedsNote, RunBar } from "../learn/RunBar";
import type { ReplayHandle } from "../learn/RunReplay";
import { RunResult, SavedRun } from "../learn/SavedRun";
import { storedKeys, store, useStored } from "../learn/stored";
import type { ListedExperiment } from "../learn/types";
import { useExperimentRun } from "../learn/useExperimentRun";
import { shippedOpenedKey } from "./progress";
import { useShippedRun } from "./useShippedRun";

type Source = "live" | "shipped";

/** Where the lesson stands in the course, its minutes, its title, goal and question. */
function LessonHeading({ card, place }: { card: ListedExperiment; place: { position: number; count: number } }) {
  return (
    <>
      <p className="lesson-place">
        Lesson {place.position} of {place.count} · {card.minutes} min{card.core ? "" : " · going further"}
      </p>
      <h2 id={`${card.id}-title`}>{card.title}</h2>
      <p className="goal">
        <strong>Goal:</strong> {card.goal}
      </p>
      <p className="question">{card.question}</p>
    </>
  );
}

/** The lesson's shipped run, opened instead of a live one: replayed from its committed file. */
function ShippedRun({ card, replay }: { card: ListedExperiment; replay?: React.Ref<ReplayHandle> }) {
  const shipped = useShippedRun(card.id);
  if (shipped.isPending) return <p className="hint">Loading the shipped run…</p>;
  if (shipped.error) return <p role="alert">The shipped run could not be loaded: {shipped.error.message}</p>;
  if (!shipped.data) return <p className="hint">This lesson has no shipped run yet (npm run course:record).</p>;
  const record = shipped.data;
  return (
    <>
      <p className="hint shipped-note" data-shipped-run={card.id}>
        The shipped run, recorded {new Date(record.startedAt).toUTCString()}: verdict{" "}
        {record.verdict === "as-expected" ? "as expected" : "unexpected"}. It replays as it was recorded; nothing runs.
      </p>
      <RunResult record={record} title={`Shipped run of “${card.title}”`} replay={replay} />
    </>
  );
}

/**
 * One lesson of the course: its place and minutes, goal, question, the prediction asked before Run
 * ("Expected" hidden until answered or run), Run or its shipped run, the replay to step fact by fact, and
 * the takeaway once a run has ended. `replay` lets the presenter view's keyboard step the facts.
 */
export function Lesson({
  card,
  place,
  replay,
}: {
  card: ListedExperiment;
  place: { position: number; count: number };
  replay?: React.Ref<ReplayHandle>;
}) {
  const runner = useExperimentRun(card);
  const [chosen, setChosen] = useStored<string>(storedKeys.prediction(card.id));
  const [source, setSource] = useState<Source | null>(null);
  const shown: Source | null = source ?? (runner.last ? "live" : null);
  const shipped = useShippedRun(card.id, shown === "shipped");
  const liveEnded = runner.last !== null && !runner.run.isPending;
  const verdict = shown === "shipped" ? (shipped.data?.verdict ?? null) : liveEnded ? runner.last!.verdict : null;
  const start = () => {
    setSource("live");
    runner.start();
  };
  const openShipped = () => {
    setSource("shipped");
    store(shippedOpenedKey(card.id), true);
  };
  return (
    <article className="lesson" aria-labelledby={`${card.id}-title`} data-lesson={card.id}>
      <LessonHeading card={card} place={place} />
      <PredictionForm card={card} chosen={chosen} onChoose={setChosen} />
      <Expected card={card} revealed={chosen !== null || verdict !== null} />
      <NeedsNote card={card} />
      <RunBar
        card={card}
        runner={{ ...runner, start }}
        more={
          <button type="button" className="quiet" onClick={openShipped} aria-pressed={shown === "shipped"}>
            Open the shipped run
          </button>
        }
      />
      {verdict && <PredictionVerdict card={card} chosen={chosen} verdict={verdict} />}
      {shown === "live" && runner.last && (
        <SavedRun
          key={runner.last.runId}
          runId={runner.last.runId}
          title={`Run of “${card.title}”`}
          link={{ predicted: chosen }}
          replay={replay}
        />
      )}
      {shown === "shipped" && <ShippedRun card={card} replay={replay} />}
      {verdict && (
        <section className="takeaway" aria-labelledby={`${card.id}-takeaway`}>
          <h3 id={`${card.id}-takeaway`}>Takeaway</h3>
          <p>{card.takeaway}</p>
        </section>
      )}
    </article>
  );
}
