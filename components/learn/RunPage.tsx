"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { PredictionVerdict } from "./Prediction";
import { runQuery, SavedRun } from "./SavedRun";
import { useExperiments } from "./useExperiments";

/**
 * `/learn/runs/{runId}`: one saved run, reopened and replayed, for a class or a colleague; with the
 * prediction made before it when its link carries one (`?predicted=`).
 */
export function RunPage({ runId, predicted }: { runId: string; predicted: string | null }) {
  const run = useQuery(runQuery(runId));
  const cards = useExperiments();
  const card = cards.data?.experiments.find((each) => each.id === run.data?.experimentId);
  const title = card?.title ?? run.data?.experimentId ?? "Saved run";
  const known = card?.prediction.choices.some((choice) => choice.id === predicted) ? predicted : null;
  return (
    <main>
      <header className="masthead">
        <div>
          <h1>{title}</h1>
          <p className="tagline">
            A saved run{run.data ? `, ${new Date(run.data.startedAt).toUTCString()}` : ""}
            {run.data?.imported ? " (imported)" : ""}.{" "}
            {run.data && (
              <span className={run.data.verdict === "as-expected" ? "verdict ok" : "verdict bad"}>
                Verdict: {run.data.verdict === "as-expected" ? "as expected" : "unexpected"}.
              </span>
            )}{" "}
            <Link href="/learn">Back to Learn</Link>
          </p>
        </div>
      </header>
      {card && <p className="question">{card.question}</p>}
      {card && run.data && known && <PredictionVerdict card={card} chosen={known} verdict={run.data.verdict} />}
      <section className="card experiment" aria-labelledby="run-heading">
        <h2 id="run-heading">The run, replayed</h2>
        <SavedRun runId={runId} title="The run, replayed" />
      </section>
    </main>
  );
}
