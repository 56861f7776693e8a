/**
 * This process's lanes while their requests run, in memory: a lease's lane row is written only at its answer,
 * so a wait for a phase in flight (lib/lab/experiments/lab-waits.ts) reads the lane here, as its recorder
 * changes it. A lane leaves once its request is answered.
 */
import { processSingleton } from "../core/process-singleton";
import type { Lane } from "./lane";

const running = processSingleton("LiveLanes", () => new Map<string, Lane>());

/** The recorder's lane changed: it is kept (the same object, which the recorder goes on changing) until answered. */
export function laneChanged(lane: Lane): void {
  if (!lane.operationId) return;
  if (lane.answeredAt === null) running.set(lane.operationId, lane);
  else running.delete(lane.operationId);
}

/** The running lane of `operationId` in this process, or undefined (answered, or recorded elsewhere). */
export const liveLane = (operationId: string): Lane | undefined => running.get(operationId);
