import { describe, expect, it } from "vitest";
import { CallTransit, epochNow, sentAtHeader } from "./call-timing";

const stamped = (sentAt: number) => new Request("http://idp/", { headers: { [sentAtHeader]: String(sentAt) } });

describe("the provider's estimate of a call's way back", () => {
  it("is the quickest recent way there, and a call's sent-at is its stamp", () => {
    const transit = new CallTransit();
    const now = epochNow();
    expect(transit.sentAt(stamped(now - 5), now)).toBe(now - 5);
    expect(transit.sentAt(stamped(now - 2), now)).toBe(now - 2);
    expect(transit.wayBackMs()).toBe(2);
  });

  it("takes a call's arrival for its sent-at when the stamp is missing or ahead of the provider's clock", () => {
    const transit = new CallTransit();
    const now = epochNow();
    expect(transit.sentAt(new Request("http://idp/"), now)).toBe(now);
    expect(transit.sentAt(stamped(now + 50), now)).toBe(now);
    expect(transit.wayBackMs()).toBe(0);
  });
});
