/**
 * The trials of `npm run bench:race`: N devices of Ada switch her primary identity at once under `none`, the
 * requests sent by the browser (the barrier's default) or last-byte by the kit; each trial records the send
 * spread, the arrival spread the lab's lanes give (`requestedAt`) and whether the provider ended up corrupted.
 * The two modes alternate within each trial number, so that a change of the machine's load falls on both.
 */
import { appendFileSync } from "node:fs";
import { test } from "@lease-lock-lab/race";
import type { APIRequestContext } from "@playwright/test";
import { readLab, resetLab, switchRequests } from "../../e2e/lab";
import { adaSwitchers, auditOf, sendSwitch, signIn } from "../../e2e/races/switchers";
import { actorCounts, poolSize, providerLatencyMs, sends, trials, trialsFile, type Trial } from "./settings";

/** The lanes of Ada's switches requested after `since` (the database's clock): this race's. */
async function requestedSince(request: APIRequestContext, since: string): Promise<string[]> {
  const { operations } = await readLab(request, "/api/lab/timeline?userId=ada&sinceMs=600000");
  return (operations as { requestedAt: string }[])
    .map((lane) => lane.requestedAt)
    .filter((requestedAt) => requestedAt > since);
}

for (const actors of actorCounts)
  for (let trial = 1; trial <= trials; trial++)
    for (const send of trial % 2 === 1 ? sends : [...sends].reverse())
      test(`N = ${actors}, trial ${trial}: ${send}`, async ({ race, request }) => {
        await resetLab(request, {
          strategy: "none",
          reconcileAfterMs: null,
          poolSize,
          provider: { latencyMs: providerLatencyMs, jitterMs: 0 },
        });
        const { now } = await readLab(request, "/api/lab/timeline?userId=ada&sinceMs=1");
        // Ada has three identities besides her primary: actor i makes the (i mod 3)-th of them primary.
        const switchers = Array.from({ length: actors }, (_, actor) => adaSwitchers[actor % adaSwitchers.length]!);
        const result = await race({
          actors,
          open: async (page) => {
            await signIn(page, "ada");
            await page.goto("/api/session");
          },
          act: (page, actor) => sendSwitch(page, switchers[actor]!),
          hold: switchRequests,
          send,
          barrierTimeoutMs: 120_000,
          arrivals: () => requestedSince(request, now),
        });
        const record: Trial = {
          actors,
          trial,
          send,
          sendMs: result.spread.sendMs,
          acknowledged: result.spread.acknowledged,
          arrivalMs: result.spread.arrivalMs,
          arrivals: result.spread.arrivals,
          statuses: result.answers.map((answer) => answer.status),
          corrupt: !(await auditOf(request, "ada")).consistent,
        };
        appendFileSync(trialsFile, `${JSON.stringify(record)}\n`);
      });
