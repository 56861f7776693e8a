import { describe, expect, it } from "vitest";
import { arrivedAtHeader, CallTransit, delayUntil, machineNow, sentAtHeader } from "./call-timing";

const call = (arrivedAt: number, sentAt?: number) =>
  new Request("http://idp/", {
    headers: {
      [arrivedAtHeader]: String(arrivedAt),
      ...(sentAt === undefined ? {} : { [sentAtHeader]: String(sentAt) }),
    },
  });

describe("the provider's estimate of a call's way back", () => {
  it("is the quickest recent way there, and a call's sent-at is its stamp", () => {
    const transit = new CallTransit();
    const now = machineNow();
    expect(transit.sentAt(call(now, now - 5))).toBe(now - 5);
    expect(transit.sentAt(call(now, now - 2))).toBe(now - 2);
    expect(transit.wayBackMs()).toBe(2);
  });

  it("takes a call's arrival for its sent-at when the stamp is missing or ahead of the provider's clock", () => {
    const transit = new CallTransit();
    const now = machineNow();
    expect(transit.sentAt(call(now))).toBe(now);
    expect(transit.sentAt(call(now, now + 50))).toBe(now);
    expect(transit.wayBackMs()).toBe(0);
  });
});

describe("a wait until a moment on the machine's clock", () => {
  it("never ends before its moment, even when timers have lately fired late", async () => {
    // Timers made late by work done after they were set: later waits are shortened by that lateness.
    for (let wait = 0; wait < 16; wait++) {
      const waited = delayUntil(machineNow() + 5);
      const busyUntil = machineNow() + 20;
      while (machineNow() < busyUntil);
      await waited;
    }
    const moment = machineNow() + 40;
    await delayUntil(moment);
    expect(machineNow()).toBeGreaterThanOrEqual(moment);
  });
});
