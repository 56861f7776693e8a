/**
 * One call to a Management API endpoint, from its arrival to its answer: what it gets (drawn from the lab's
 * settings), when it is answered, what the provider does with it, and its line in the call log.
 */
import type { Kysely } from "kysely";
import { applied, errorAnswer, notAppliedInTime, notAppliedPastDeadline, toResponse, type Answer } from "./answers";
import { drawCall, type ChaosSource, type EndpointName } from "./call-draw";
import { logCall } from "./call-log";
import { AnswerTiming, CallTransit, deadlineOf, delayUntil, machineNow } from "./call-timing";
import { fencingOf } from "./fencing";
import { play } from "./play";
import type { IdpDatabase } from "./schema";
import type { Fencing } from "./store";

/** An endpoint's own work: the change (or read) it makes, given the request, its path's parts and its fence. */
export type Perform = (request: Request, params: Record<string, string>, fencing: Fencing) => Promise<Answer>;

/** The state every call of one provider shares: its database, its knobs, and its sense of time. */
export interface CallContext {
  db: Kysely<IdpDatabase>;
  chaosSource: ChaosSource;
  transit: CallTransit;
  timing: AnswerTiming;
}

export function providerCallContext(db: Kysely<IdpDatabase>, chaosSource: ChaosSource): CallContext {
  const transit = new CallTransit();
  return { db, chaosSource, transit, timing: new AnswerTiming(transit) };
}

/** Answers one call of endpoint `name`: latency, injected failures, Auth0-style errors, the call log. */
export async function simulatedCall(
  context: CallContext,
  name: EndpointName,
  request: Request,
  params: Record<string, string>,
  perform: Perform,
): Promise<Response> {
  const { db, transit, timing } = context;
  const sentAt = transit.sentAt(request);
  const { settings, outcome, latencyMs, retryAfterSeconds } = await drawCall(db, context.chaosSource, name);
  const { applyLimitMs } = settings;
  const fencing = fencingOf(request, settings);
  const deadline = deadlineOf(request, sentAt);
  // The limits hold even when a timer fires late on a busy process: past them, nothing is applied.
  const apply = () => {
    if (machineNow() - sentAt > applyLimitMs) return Promise.resolve(errorAnswer(notAppliedInTime));
    if (deadline !== null && machineNow() > deadline) return Promise.resolve(errorAnswer(notAppliedPastDeadline));
    return applied(() => perform(request, params, fencing));
  };

  // The provider's hard limit: a request it could not apply in time is dropped, answered at the limit.
  const dropped = (outcome === "ok" || outcome === "applied-late") && latencyMs > applyLimitMs;
  const plan = timing.plan(name, sentAt, dropped ? applyLimitMs : latencyMs);
  const played = await play(dropped ? "dropped" : outcome, plan.waitMs, retryAfterSeconds, request.signal, apply);
  await logCall(db, request, played.logged, timing.durationMs(sentAt, plan));
  if (outcome === "ok" && !dropped) timing.workDone(name, plan);
  // Made before the wait, so that only its way out comes after the moment.
  const response = toResponse(played.answer);
  await delayUntil(plan.answerAt);
  return response;
}
