import { describe, expect, it, vi } from "vitest";
import { answeredAtHeader } from "./call-timing";

type CallTiming = typeof import("./call-timing");

/** A fresh evaluation of the module, as each Next.js bundle (a route's, instrumentation's) has its own. */
async function anotherBundlesCopy(): Promise<CallTiming> {
  vi.resetModules();
  return import("./call-timing");
}

describe("the time an answer takes back to the app's fetch", () => {
  it("is one estimate per process: what a route's copy notes, the simulator's copy reads", async () => {
    const routes = await anotherBundlesCopy();
    const simulator = await anotherBundlesCopy();
    expect(routes).not.toBe(simulator);
    const answeredAt = performance.now() - 3;
    routes.noteDelivery(new Response(null, { headers: { [answeredAtHeader]: String(answeredAt) } }));
    expect(simulator.deliveryMs()).toBeGreaterThanOrEqual(3);
  });
});
