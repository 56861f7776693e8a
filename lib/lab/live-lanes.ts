/**
 * This process's lanes while their requests run, in memory: a lease's lane row is written only at its answer,
 * so a wait for a phase in flight (lib/lab/experiments/lab-waits.ts) reads the lane here, as its recorder
 * changes it, and the stream tells them to instances that start watching (stream.ts). A lane leaves once its
 * request is answered.
 */
import { processSingleton } from "../core/process-singleton";
import type { Lane } from "./lane";

/** A running lane (the recorder's own object, which it goes on changing) and how many changes it has made. */
export interface LiveLane {
  lane: Lane;
  version: number;
}

const running = processSingleton("LiveLanes", () => new Map<string, LiveLane>());

/** The recorder's lane changed: it is kept until answered. */
export function laneChanged(lane: Lane, version: number): void {
  if (!lane.operationId) return;
  if (lane.answeredAt === null) running.set(lane.operationId, { lane, version });
  else running.delete(lane.operationId);
}

/** The running lane of `operationId` in this process, or undefined (answered, or recorded elsewhere). */
export const liveLane = (operationId: string): Lane | undefined => running.get(operationId)?.lane;

/** Every lane running in this process now. */
export const liveLanes = (): LiveLane[] => [...running.values()];
