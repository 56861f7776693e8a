import { describe, expect, it } from "vitest";
import { Deadline } from "./deadline";

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
