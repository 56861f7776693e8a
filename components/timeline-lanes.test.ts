import { describe, expect, it } from "vitest";
import type { Lane } from "./api";
import { testLane } from "./test-lane";
import { laneStreamed, readingLanes } from "./timeline-lanes";

describe("the timeline's read and the lanes streamed meanwhile", () => {
  it("lands with every lane streamed while it was on its way, each as far along as it got", async () => {
    let land = () => {};
    const read = readingLanes(
      () =>
        new Promise<{ now: string; operations: Lane[] }>(
          (resolve) => (land = () => resolve({ now: "then", operations: [testLane("a", false)] })),
        ),
    );
    // The read was made before these: "a" answered, and "b" came and went.
    laneStreamed(testLane("a", true));
    laneStreamed(testLane("b", false));
    laneStreamed(testLane("b", true));
    land();
    expect(await read).toEqual({ now: "then", operations: [testLane("a", true), testLane("b", true)] });
  });

  it("keeps what it read over a streamed lane less far along, and hears nothing once landed", async () => {
    const first = await readingLanes(async () => {
      laneStreamed(testLane("a", false));
      return { operations: [testLane("a", true)] };
    });
    expect(first.operations).toEqual([testLane("a", true)]);
    laneStreamed(testLane("c", true));
    expect((await readingLanes(async () => ({ operations: [] }))).operations).toEqual([]);
  });
});
