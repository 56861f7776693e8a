import type { Lane, Timeline } from "./api";

/** How far along a lane is: phases only get added and ended, and an answer comes once. */
const progress = (lane: Lane): number =>
  lane.phases.length + lane.phases.filter((phase) => phase.endedAt !== null).length + (lane.answeredAt ? 1 : 0);

/** Adds a lane, or replaces its older self: one that is less far along is not kept (a snapshot may race a message). */
function upsert(lanes: Lane[], lane: Lane): Lane[] {
  const index = lanes.findIndex((each) => each.operationId === lane.operationId);
  if (index < 0) return [...lanes, lane];
  if (progress(lane) < progress(lanes[index]!)) return lanes;
  return lanes.with(index, lane);
}

/** A streamed lane on the timeline the page holds (none yet: the page's read brings it, see `readingLanes`). */
export const upsertLane = (timeline: Timeline | undefined, lane: Lane): Timeline | undefined =>
  timeline && { ...timeline, operations: upsert(timeline.operations, lane) };

/** The lanes of `lanes` answered where the page's own copy of them (`known`) was not: answers it sees first now. */
export const answeredSince = (known: Lane[], lanes: Lane[]): Lane[] =>
  lanes.filter((lane) => lane.answeredAt && !known.find((each) => each.operationId === lane.operationId)?.answeredAt);

/** The lanes streamed while each read of the timeline now on its way was. */
const reads = new Set<Lane[]>();

/** A streamed lane: every read of the timeline on its way hears of it too. */
export function laneStreamed(lane: Lane): void {
  for (const heard of reads) heard.push(lane);
}

/**
 * Reads the timeline with the lanes streamed while the read was on its way: the read may predate them, and a
 * lane whose every message came meanwhile (a double click's refusal is over in a few) would be missing from it
 * for good, the page having had no timeline to add them to.
 */
export async function readingLanes<Read extends { operations: Lane[] }>(read: () => Promise<Read>): Promise<Read> {
  const heard: Lane[] = [];
  reads.add(heard);
  try {
    const timeline = await read();
    return { ...timeline, operations: heard.reduce(upsert, timeline.operations) };
  } finally {
    reads.delete(heard);
  }
}
