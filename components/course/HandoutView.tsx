"use client";

import Link from "next/link";
import { TimelineChart } from "../TimelineChart";
import { factMarks, spanOf } from "../learn/replay";
import { RichText } from "../learn/RichText";
import type { ListedExperiment, RunRecord } from "../learn/types";
import { useDrawing } from "../learn/useDrawing";
import { inCourseOrder, useExperiments } from "../learn/useExperiments";
import { useShippedRun } from "./useShippedRun";

/** A shipped run's whole picture, every fact numbered on it, and the facts below. */
function HandoutPicture({ record, title }: { record: RunRecord; title: string }) {
  const { from, to } = spanOf(record);
  const drawing = useDrawing(record, to);
  return (
    // The printed picture gives way to the facts below it: the more facts, the shorter (print CSS).
    <figure className="handout-picture" style={{ "--facts": record.steps.length } as React.CSSProperties}>
      <TimelineChart
        label={title}
        lanes={drawing.lanes}
        at={to}
        groupOf={drawing.groupOf}
        laneCaption={drawing.laneCaption}
        marks={factMarks(record.steps, to, from)}
      />
      <figcaption>
        A run recorded {new Date(record.startedAt).toUTCString()} (verdict{" "}
        {record.verdict === "as-expected" ? "as expected" : "unexpected"}). The numbered facts:
      </figcaption>
      <ol className="handout-facts">
        {record.steps.map((step) => (
          <li key={step.n} value={step.n}>
            {step.text}
          </li>
        ))}
      </ol>
    </figure>
  );
}

/** One lesson on a page of its own: its question, the prediction to make (answers left blank), the picture, the facts. */
function HandoutLesson({ card, position }: { card: ListedExperiment; position: number }) {
  const shipped = useShippedRun(card.id);
  return (
    <section
      className="handout-lesson"
      aria-labelledby={`handout-${card.id}`}
      data-lesson={card.id}
      data-ready={shipped.isPending ? undefined : "true"}
    >
      <h2 id={`handout-${card.id}`}>
        {position}. {card.title} <span className="hint">({card.minutes} min)</span>
      </h2>
      <p className="goal">
        <strong>Goal:</strong> {card.goal}
      </p>
      <p className="question">{card.question}</p>
      <p>
        <strong>Predict:</strong> {card.prediction.prompt}
      </p>
      <ol type="A" className="handout-choices">
        {card.prediction.choices.map((choice) => (
          <li key={choice.id}>
            <span className="box" aria-hidden="true" /> <RichText text={choice.text} />
          </li>
        ))}
      </ol>
      {shipped.data ? (
        <HandoutPicture record={shipped.data} title={card.title} />
      ) : (
        !shipped.isPending && <p className="hint">No shipped run for this lesson yet.</p>
      )}
    </section>
  );
}

/** The answer key, on a page of its own: each lesson's answer and its takeaway. */
function AnswerKey({ lessons }: { lessons: ListedExperiment[] }) {
  return (
    <section className="answer-key" aria-labelledby="answer-key">
      <h2 id="answer-key">Answer key</h2>
      <ol>
        {lessons.map((card) => {
          const index = card.prediction.choices.findIndex((choice) => choice.id === card.prediction.answer);
          return (
            <li key={card.id}>
              <strong>{card.title}</strong> Answer {"ABCD"[index]}: {card.prediction.choices[index]?.text}.{" "}
              {card.takeaway}
            </li>
          );
        })}
      </ol>
    </section>
  );
}

/** `/learn/course/handout`: the course printed, one lesson a page, from the shipped runs; the answer key apart. */
export function HandoutView() {
  const cards = useExperiments();
  const lessons = inCourseOrder(cards.data?.experiments ?? []);
  return (
    <main className="handout">
      <header className="masthead no-print">
        <div>
          <h1>The handout</h1>
          <p className="tagline">
            Every lesson of the course on a page of its own, drawn from its shipped run, and the answer key on the last
            page. <Link href="/learn/course">Back to the course</Link>
          </p>
        </div>
        <button type="button" onClick={() => window.print()}>
          Print
        </button>
      </header>
      {cards.error && <p role="alert">The lessons could not be loaded: {cards.error.message}</p>}
      {lessons.map((card, index) => (
        <HandoutLesson key={card.id} card={card} position={index + 1} />
      ))}
      {lessons.length > 0 && <AnswerKey lessons={lessons} />}
    </main>
  );
}
