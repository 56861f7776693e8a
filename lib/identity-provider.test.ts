import { describe, expect, it } from "vitest";
import { Deadline } from "./deadline";
import { backoffMs, splitIdentityId } from "./identity-provider";

describe("backoff", () => {
  it("grows exponentially with jitter between half and the whole step", () => {
    expect(backoffMs(1, null, () => 0)).toBe(50);
    expect(backoffMs(1, null, () => 1)).toBe(100);
    expect(backoffMs(3, null, () => 1)).toBe(400);
  });

  it("never waits less than the provider's Retry-After", () => {
    expect(backoffMs(1, 2_000, () => 1)).toBe(2_000);
    expect(backoffMs(6, 1_000, () => 1)).toBe(3_200);
  });
});

describe("deadline", () => {
  it("fires when its budget runs out, says why, and can be moved later until then", async () => {
    const deadline = new Deadline(20);
    deadline.extend(60);
    expect(deadline.remainingMs()).toBeGreaterThan(20);
    await new Promise((resolve) => deadline.signal.addEventListener("abort", resolve));
    expect(deadline.firedBecause).toBe("deadline reached");
    deadline.extend(1_000);
    expect(deadline.signal.aborted).toBe(true);
  });

  it("can be fired at once, e.g. when the lease is lost", () => {
    const deadline = new Deadline(10_000);
    deadline.abort("lease lost");
    expect(deadline.firedBecause).toBe("lease lost");
  });
});

it("splits an identity id at its first bar only", () => {
  expect(splitIdentityId("auth0|abc|def")).toEqual({ provider: "auth0", user_id: "abc|def" });
});
