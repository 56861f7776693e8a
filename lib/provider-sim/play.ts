/**
 * What the provider does with a call once its outcome is drawn: hang until the caller gives up, drop it,
 * fail it, or apply it (answering on time or late). The answer it gives and what its log says of the call.
 *
 * A call it has received is applied whether or not its caller is still there, as a real provider does: a
 * caller that gave up or died closed its connection, which tells the provider nothing about the change it
 * asked for. Only the call itself can say otherwise (its deadline header: `apply` checks it).
 */
import { delay } from "msw";
import type { ScriptedOutcome } from "./chaos-settings";
import {
  errorAnswer,
  errorCodeOf,
  internalError,
  isFenced,
  notAppliedInTime,
  notAppliedPastDeadline,
  rateLimited,
  unavailable,
  type Answer,
} from "./answers";
import type { LoggedOutcome } from "./call-log";

/** What became of a call: its answer (or no HTTP answer at all), and the log's account of it. */
export interface Played {
  answer: Answer | "network-error";
  logged: LoggedOutcome;
}

/** How long a "hanging" provider waits for its caller to give up before it gives up itself. */
const hangLimitMs = 120_000;

export async function play(
  outcome: ScriptedOutcome | "dropped",
  waitMs: number,
  retryAfterSeconds: number,
  signal: AbortSignal,
  apply: () => Promise<Answer>,
): Promise<Played> {
  if (outcome === "timeout") {
    await untilAborted(signal, hangLimitMs);
    return { answer: "network-error", logged: { status: 0, outcome: "timeout" } };
  }
  await delay(waitMs);
  switch (outcome) {
    case "dropped":
      // Not applied, now or later.
      return answered(errorAnswer(notAppliedInTime));
    case "network-error":
      return { answer: "network-error", logged: { status: 0, outcome } };
    case "429":
      return answered(rateLimited(retryAfterSeconds));
    case "500":
      return answered(internalError());
    case "503":
      return answered(unavailable());
    case "applied-late":
      return appliedLate(signal, apply);
    case "ok":
      return appliedNow(signal, apply);
  }
}

const answered = (answer: Answer, outcome: string | null = null): Played => ({
  answer,
  logged: { status: answer.status, outcome },
});

/**
 * The ambiguous outcome: the change is committed, but the answer arrives after the caller left. The
 * token is checked when the write is applied: a fenced read since it arrived refuses it.
 */
async function appliedLate(signal: AbortSignal, apply: () => Promise<Answer>): Promise<Played> {
  const answer = await apply();
  await untilAborted(signal, hangLimitMs);
  return answered(answer, logWord(answer, "applied-late"));
}

/** Applied now, its caller there or not: the log says when it had gone (`client-closed`). */
async function appliedNow(signal: AbortSignal, apply: () => Promise<Answer>): Promise<Played> {
  const answer = await apply();
  return answered(answer, logWord(answer, signal.aborted ? "client-closed" : null));
}

/**
 * The log's word for a call the provider has done with: `processed` when it applied it (or refused it by
 * its own rules, a 4xx of the call's own), else why not. Past the provider's limit it is a plain 504, as a
 * dropped call is.
 */
function logWord(answer: Answer, processed: string | null): string | null {
  if (isFenced(answer)) return "fenced";
  const code = errorCodeOf(answer);
  if (code === notAppliedInTime.errorCode) return null;
  if (code === notAppliedPastDeadline.errorCode) return "deadline-passed";
  return processed;
}

function untilAborted(signal: AbortSignal, limitMs: number): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, limitMs);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
