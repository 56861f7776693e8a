"use client";

import { Expected, PredictionForm, PredictionVerdict } from "./Prediction";
import { RichText } from "./RichText";
import { NeedsNote, RunBar } from "./RunBar";
import { SavedRun } from "./SavedRun";
import { storedKeys, useStored } from "./stored";
import type { ListedExperiment } from "./types";
import { useExperimentRun } from "./useExperimentRun";

/** The last verdict, in words, for a card folded to its question. */
const verdictWords = (verdict: "as-expected" | "unexpected" | undefined) =>
  verdict === undefined ? "not run yet" : verdict === "as-expected" ? "last run as expected" : "last run unexpected";

/**
 * One experiment, folded to its question and its last verdict; open, the prediction asked before Run, Run,
 * and after a run its replay, measured facts and explanation beside the prediction.
 */
export function ExperimentCardView({ card }: { card: ListedExperiment }) {
  const runner = useExperimentRun(card);
  const [chosen, setChosen] = useStored<string>(storedKeys.prediction(card.id));
  const { last } = runner;
  const ended = last !== null && !runner.run.isPending;
  return (
    <section className="card experiment" aria-labelledby={`${card.id}-title`} data-experiment={card.id}>
      <details>
        <summary>
          <h2 id={`${card.id}-title`}>{card.title}</h2>
          <span className="question">{card.question}</span>{" "}
          <span className={last ? `verdict ${last.verdict === "as-expected" ? "ok" : "bad"}` : "hint"}>
            ({verdictWords(last?.verdict)})
          </span>
        </summary>
        {card.failureMode && <p className="hint">Failure mode: {card.failureMode}</p>}
        <PredictionForm card={card} chosen={chosen} onChoose={setChosen} />
        <Expected card={card} revealed={chosen !== null || ended} />
        <NeedsNote card={card} />
        <RunBar card={card} runner={runner} />
        {ended && <PredictionVerdict card={card} chosen={chosen} verdict={last.verdict} />}
        {last && (
          <SavedRun key={last.runId} runId={last.runId} title={`Run of “${card.title}”`} link={{ predicted: chosen }} />
        )}
        <p className="hint">
          Try next by hand: <RichText text={card.tryNext} />
        </p>
      </details>
    </section>
  );
}
