import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningApp } from "../harness/app-server";
import { appClient } from "../harness/http-client";
import { cluster, startCardApp } from "./cluster";

let app: RunningApp;

// The tier's pair is synchronous: the card makes replication asynchronous and stops it itself, then puts the pair
// back as it found it.
beforeAll(async () => {
  app = await startCardApp("failover_async_provider", 3);
});

afterAll(() => app?.stop());

describe("failover-async-loses-lease, on the tier's pair", () => {
  it("a promotion loses two acquisitions: the counter alone lets the late write in, (generation, fence) refuses it", async () => {
    const answer = await appClient(app.baseUrl).post<{ verdict: string; explanation: string; observed: any }>(
      "/api/lab/experiments/failover-async-loses-lease/run",
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    console.log(`failover-async-loses-lease: ${answer.body.verdict}: ${answer.body.explanation}`);
    expect(answer.body.verdict, JSON.stringify(answer.body.observed, null, 1)).toBe("as-expected");
    const { counterAlone, generationThenCounter } = answer.body.observed;

    for (const variant of [counterAlone, generationThenCounter]) {
      // The standby never had the second acquisition; the third switch was given the first one's number again,
      // in a greater generation.
      const before = BigInt(variant.before.fence);
      expect(variant.lost.secondOnPrimary.fence).toBe(String(before + 2n));
      expect(variant.lost.secondOnStandby.fence).toBe(String(before));
      expect(variant.third.fence).toBe(String(before + 1n));
      expect(BigInt(variant.third.generation)).toBeGreaterThan(BigInt(variant.lost.secondOnPrimary.generation));
    }
    // The counter alone: the late unlink was applied and the accounts are corrupt.
    const unlink = (variant: any) => variant.late.calls.find((call: { method: string }) => call.method === "DELETE");
    expect(unlink(counterAlone).status).toBe(200);
    expect(counterAlone.auditConsistent).toBe(false);
    // The pair: refused as fenced, the rightful holder finished, the audit consistent.
    expect(unlink(generationThenCounter).outcome).toBe("fenced");
    expect([generationThenCounter.next.status, generationThenCounter.auditConsistent]).toEqual([200, true]);

    // The run leaves the pair as it found it: a primary and a streaming standby, synchronous.
    const after = await cluster();
    expect(after.mode).toBe("sync");
    expect(after.nodes.map((node) => node.role).sort()).toEqual(["primary", "standby"]);
  });
});
