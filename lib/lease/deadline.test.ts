import { describe, expect, it } from "vitest";
import { Deadline } from "./deadline.ts";

describe("deadline", () => {
  it("fires when its budget runs out, says why, and can be moved later until then", async () => {
    const deadline = new Deadline(20);
    deadline.extend(60);
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
