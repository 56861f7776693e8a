"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { api } from "../api";
import { runQuery, SavedRun } from "./SavedRun";
import type { ListedExperiment } from "./types";

/** `/learn/runs/{runId}`: one saved run, reopened and replayed, for a class or a colleague. */
export function RunPage({ runId }: { runId: string }) {
  const run = useQuery(runQuery(runId));
  const cards = useQuery({
    queryKey: ["experiments"],
    queryFn: () => api<{ experiments: ListedExperiment[] }>("/api/lab/experiments"),
  });
  const card = cards.data?.experiments.find((each) => each.id === run.data?.experimentId);
  const title = card?.title ?? run.data?.experimentId ?? "Saved run";
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
      <section className="card experiment" aria-label="The run">
        <SavedRun runId={runId} title="The run, replayed" showLink={false} />
      </section>
    </main>
  );
}
