import { describe, expect, it } from "vitest";
import type { Lane } from "./api";
import { laneStreamed, readingLanes } from "./timeline-lanes";

const lane = (operationId: string, answered: boolean): Lane => ({
  operationId,
  userId: "ada",
  instance: "1",
  strategy: "lease",
  toIdentityId: "github|8812",
  requestedAt: "2026-12-07T12:00:00.000Z",
  answeredAt: answered ? "2026-12-07T12:00:01.000Z" : null,
  status: answered ? 200 : null,
  problemType: null,
  phases: [],
  lease: null,
});

describe("the timeline's read and the lanes streamed meanwhile", () => {
  it("lands with every lane streamed while it was on its way, each as far along as it got", async () => {
    let land = () => {};
    const read = readingLanes(
      () =>
        new Promise<{ now: string; operations: Lane[] }>(
          (resolve) => (land = () => resolve({ now: "then", operations: [lane("a", false)] })),
        ),
    );
    // The read was made before these: "a" answered, and "b" came and went.
    laneStreamed(lane("a", true));
    laneStreamed(lane("b", false));
    laneStreamed(lane("b", true));
    land();
    expect(await read).toEqual({ now: "then", operations: [lane("a", true), lane("b", true)] });
  });

  it("keeps what it read over a streamed lane less far along, and hears nothing once landed", async () => {
    const first = await readingLanes(async () => {
      laneStreamed(lane("a", false));
      return { operations: [lane("a", true)] };
    });
    expect(first.operations).toEqual([lane("a", true)]);
    laneStreamed(lane("c", true));
    expect((await readingLanes(async () => ({ operations: [] }))).operations).toEqual([]);
  });
});
