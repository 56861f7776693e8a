/**
 * Waits an experiment makes for a state, read where the state lives, rather than for a time it would
 * assume: a provider call in flight (its timeline lane), a lease of a given age (the database's clock).
 */
import { setTimeout as pause } from "node:timers/promises";
import type { LeaseState } from "@lease-lock-lab/lease";
import { instrumentDb } from "../instrument-db";
import type { PhaseName } from "../lane";
import { liveLane } from "../live-lanes";

/** The operation's lane phases as they are now: in this process's memory while it runs here, else its row. */
async function phasesOf(operationId: string): Promise<{ name: string; endedAt: string | null }[]> {
  const live = liveLane(operationId);
  if (live) return live.phases;
  const lane = await instrumentDb()
    .selectFrom("operation_lanes")
    .select("phases")
    .where("operation_id", "=", operationId)
    .executeTakeFirst();
  return (lane?.phases ?? []) as { name: string; endedAt: string | null }[];
}

/**
 * Polls the operation's timeline lane (this process's, or its row on the lab's own pool, not the app's)
 * until its `phase` has started and not ended: a provider call in flight. False when `limitMs` passed first.
 */
export async function untilInPhase(operationId: string, phase: PhaseName, limitMs: number): Promise<boolean> {
  const until = performance.now() + limitMs;
  while (performance.now() < until) {
    if ((await phasesOf(operationId)).some((each) => each.name === phase && each.endedAt === null)) return true;
    await pause(5);
  }
  return false;
}

/**
 * Waits until `lease`, held, is `ageMs` old on the database's clock (from its `locked_at`, which renewals do
 * not move): e.g. until its first TTL has passed, whether or not it was renewed. False when it is not held.
 */
export async function untilAged(lease: LeaseState, ageMs: number): Promise<boolean> {
  if (!lease.held || !lease.lockedAt || !lease.expiresAt) return false;
  const databaseNow = lease.expiresAt.getTime() - lease.remainingMs;
  await pause(Math.max(0, lease.lockedAt.getTime() + ageMs - databaseNow));
  return true;
}
