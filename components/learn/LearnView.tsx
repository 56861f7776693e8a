"use client";

import Link from "next/link";
import { ExperimentCardView } from "./ExperimentCardView";
import { ImportRun } from "./ImportRun";
import { useExperiments } from "./useExperiments";

/** The Learn view: the article's questions and failure modes, each an experiment run in one click. */
export function LearnView() {
  const cards = useExperiments();
  return (
    <main>
      <header className="masthead">
        <div>
          <h1>Learn</h1>
          <p className="tagline">
            Every question and failure mode of the lease-lock article, reproduced in one click and explained. Open a
            card to predict, run and step through what happened, or follow <Link href="/learn/course">the course</Link>,
            a guided 45-minute class. <Link href="/">Back to the lab</Link>
          </p>
        </div>
      </header>
      <ImportRun />
      {cards.isPending && <p>Loading…</p>}
      {cards.error && <p role="alert">The experiments could not be loaded: {cards.error.message}</p>}
      <div className="experiments">
        {cards.data?.experiments.map((card) => (
          <ExperimentCardView key={card.id} card={card} />
        ))}
      </div>
    </main>
  );
}
