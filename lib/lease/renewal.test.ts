import { describe, expect, it } from "vitest";
import { Renewal } from "./renewal.ts";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The polls wait long: lint and typecheck run beside these tests, and a loaded machine delays every timer.
describe("renewal", () => {
  it("never overlaps renewals: the next is armed only after the one in flight answered", async () => {
    let inFlight = 0;
    let most = 0;
    let renewals = 0;
    const renewal = new Renewal(5, async () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await pause(30);
      inFlight -= 1;
      renewals += 1;
    });
    await expect.poll(() => renewals, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    await renewal.stop();
    expect(most).toBe(1);
  });

  it("stop waits for the renewal in flight; none starts after it", async () => {
    let answered = false;
    let started = 0;
    const renewal = new Renewal(5, async () => {
      started += 1;
      answered = false;
      await pause(40);
      answered = true;
    });
    await expect.poll(() => started, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    await renewal.stop();
    expect(answered).toBe(true);
    const startedBeforeStop = started;
    await pause(30);
    expect(started).toBe(startedBeforeStop);
  });

  it("a failed renewal is one failed attempt: the next one runs on time", async () => {
    let attempts = 0;
    const renewal = new Renewal(5, async () => {
      attempts += 1;
      if (attempts === 1) throw new Error("database blip");
    });
    await expect.poll(() => attempts, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    await renewal.stop();
  });
});
