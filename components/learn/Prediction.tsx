"use client";

import { RichText } from "./RichText";
import type { ListedExperiment } from "./types";

/** The question asked before the run: 2–4 answers as radio buttons. */
export function PredictionForm({
  card,
  chosen,
  onChoose,
}: {
  card: ListedExperiment;
  chosen: string | null;
  onChoose: (choiceId: string) => void;
}) {
  return (
    <fieldset className="prediction">
      <legend>Predict: {card.prediction.prompt}</legend>
      {card.prediction.choices.map((choice) => (
        <label key={choice.id} className="choice">
          <input
            type="radio"
            name={`${card.id}-prediction`}
            value={choice.id}
            checked={chosen === choice.id}
            onChange={() => onChoose(choice.id)}
          />{" "}
          <RichText text={choice.text} />
        </label>
      ))}
    </fieldset>
  );
}

/** What the lab expects: hidden until the student has answered, or a run has ended. */
export function Expected({ card, revealed }: { card: ListedExperiment; revealed: boolean }) {
  return revealed ? (
    <p className="hint expected">
      Expected: <RichText text={card.expected} />
    </p>
  ) : (
    <p className="hint expected">What the lab expects is shown once you have answered, or the run has ended.</p>
  );
}

const quoted = (card: ListedExperiment, choiceId: string | null) =>
  `“${card.prediction.choices.find((choice) => choice.id === choiceId)?.text ?? choiceId}”`;

/**
 * The prediction beside what was measured. An as-expected run showed the answer the lesson gives; an
 * unexpected one did not, and says so rather than pretending.
 */
export function PredictionVerdict({
  card,
  chosen,
  verdict,
}: {
  card: ListedExperiment;
  chosen: string | null;
  verdict: "as-expected" | "unexpected";
}) {
  const answer = quoted(card, card.prediction.answer);
  const yours = chosen === null ? "You made no prediction." : `You predicted ${quoted(card, chosen)}.`;
  const measured =
    verdict === "as-expected"
      ? chosen === card.prediction.answer
        ? "The run measured exactly that."
        : `The run measured ${answer}.`
      : `The lab expects ${answer}, but this run did not show it: its facts below say what it measured.`;
  return (
    <p
      className={
        chosen !== null && chosen === card.prediction.answer ? "prediction-verdict right" : "prediction-verdict"
      }
    >
      {yours} {measured}
    </p>
  );
}
