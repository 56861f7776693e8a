import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningApp } from "../harness/app-server";
import { appClient } from "../harness/http-client";
import { cluster, startCardApp } from "./cluster";

let app: RunningApp;

beforeAll(async () => {
  app = await startCardApp("failover_sync_provider", 2);
});

afterAll(() => app?.stop());

interface SavedLane {
  operationId: string;
  phases: { name: string; outcome: string | null; detail: string | null }[];
}

describe("failover-sync-keeps-lease, on the tier's synchronous pair", () => {
  it("keeps the held lease across a promotion, and shows a cancelled commit wait on the old primary only", async () => {
    const client = appClient(app.baseUrl);
    const answer = await client.post<{
      verdict: string;
      runId: string;
      explanation: string;
      observed: Record<string, any>;
    }>("/api/lab/experiments/failover-sync-keeps-lease/run");
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const { kept, cancelLeak } = answer.body.observed;
    console.log(`failover-sync-keeps-lease: ${answer.body.verdict}: ${answer.body.explanation}`);
    expect(answer.body.verdict, JSON.stringify(answer.body.observed, null, 1)).toBe("as-expected");

    // Kept: the promoted standby had the holder's lease, refused the second switch, let the holder finish.
    expect(kept.onPromoted).toMatchObject({ held: true, fence: kept.held.onPrimary.fence });
    expect([kept.refused.status, kept.refused.problemType]).toEqual([409, "operation-in-progress"]);
    expect([kept.holder.status, kept.auditConsistent]).toEqual([200, true]);

    // The leak: PostgreSQL's warning, the old primary's row, the new primary without it, the fence again.
    const fence = String(BigInt(cancelLeak.before.fence) + 1n);
    expect(cancelLeak.cancelled.warnings.join()).toMatch(/canceling wait for synchronous replication/);
    expect([cancelLeak.cancelled.status, cancelLeak.cancelled.problemType]).toEqual([503, "database-unavailable"]);
    expect(cancelLeak.leaked.onPrimary).toMatchObject({ held: true, fence });
    expect(cancelLeak.leaked.onStandby).toMatchObject({ held: false, fence: cancelLeak.before.fence });
    expect(cancelLeak.onPromoted.held).toBe(false);
    expect(cancelLeak.next.fence).toBe(fence);
    expect(BigInt(cancelLeak.next.generation)).toBeGreaterThan(BigInt(cancelLeak.leaked.onPrimary.generation));

    // The saved run draws the cancelled acquire as the app answered it: 503, its acquire never "won".
    const saved = await client.get<{ lanes: SavedLane[] }>(`/api/lab/runs/${answer.body.runId}`);
    const lane = saved.body.lanes.find((each) => each.operationId === cancelLeak.cancelled.operationId)!;
    expect(lane.phases.find((phase) => phase.name === "acquire")?.outcome).toBe("unfinished");
    expect(lane.phases.find((phase) => phase.name === "acquire")?.detail).toMatch(/not known to be replicated/);

    // The run leaves the pair as it found it: a primary and a streaming standby, synchronous.
    const after = await cluster();
    expect(after.mode).toBe("sync");
    expect(after.nodes.map((node) => node.role).sort()).toEqual(["primary", "standby"]);
  });
});
