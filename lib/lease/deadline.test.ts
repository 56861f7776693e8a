import { describe, expect, it } from "vitest";
import { Deadline } from "./deadline.ts";

describe("deadline", () => {
  it("fires when its budget runs out, says why, and can be moved later until then", async () => {
    const deadline = new Deadline(20);
    // 200 ms: room for a pause of the process between these calls on a loaded machine (see "stalled" below).
    deadline.extend(200);
    expect(deadline.remainingMs()).toBeGreaterThan(20);
    await new Promise((resolve) => deadline.signal.addEventListener("abort", resolve));
    expect(deadline.firedBecause).toBe("timeout");
    expect((deadline.signal.reason as DOMException).name).toBe("TimeoutError");
    deadline.extend(1_000);
    expect(deadline.signal.aborted).toBe(true);
  });

  it("can be fired at once when the lease is lost, with that typed cause", () => {
    const deadline = new Deadline(10_000);
    deadline.abort("lease-lost");
    expect(deadline.firedBecause).toBe("lease-lost");
    expect(deadline.remainingMs()).toBe(0);
  });

  it("says its time ran out unrenewed when a renewal failed or stalled, and a plain timeout otherwise", async () => {
    const unrenewed = new Deadline(20);
    unrenewed.renewalStarted(1_000);
    unrenewed.renewalFailed();
    await new Promise((resolve) => unrenewed.signal.addEventListener("abort", resolve));
    expect(unrenewed.firedBecause).toBe("unrenewed");
    expect((unrenewed.signal.reason as DOMException).name).toBe("TimeoutError");
    const renewedSince = new Deadline(20);
    renewedSince.renewalStarted(1_000);
    renewedSince.renewalFailed();
    renewedSince.extend(20);
    await new Promise((resolve) => renewedSince.signal.addEventListener("abort", resolve));
    expect(renewedSince.firedBecause).toBe("timeout");
    // Its time well past the 10 ms a renewal may take: once on this loaded machine (npm test's tiers at once),
    // with 30 ms, the renewal was under 10 ms old when the time ran out (the process paused between these two
    // calls, or the timer came early), and it said "timeout".
    const stalled = new Deadline(200);
    stalled.renewalStarted(10);
    await new Promise((resolve) => stalled.signal.addEventListener("abort", resolve));
    expect(stalled.firedBecause).toBe("unrenewed");
    const answering = new Deadline(20);
    answering.renewalStarted(1_000);
    await new Promise((resolve) => answering.signal.addEventListener("abort", resolve));
    expect(answering.firedBecause).toBe("timeout");
  });

  it("stays disposed: a late extension arms no timer and moves nothing", async () => {
    const deadline = new Deadline(10_000);
    const before = deadline.remainingMs();
    deadline.dispose();
    deadline.extend(5);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(deadline.signal.aborted).toBe(false);
    expect(deadline.remainingMs()).toBeLessThanOrEqual(before);
  });
});
