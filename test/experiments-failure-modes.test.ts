// The Learn cards' failure modes (f1-f4, the support tool, the in-process mutex): each run as a teacher's click
// would (test/harness/experiment-runs.ts). The questions: experiments.test.ts.
import { describe, expect, it } from "vitest";
import { run, saved, phasesOf, writesApplied, lastAudit, tookOver } from "./harness/experiment-runs";

describe("the failure-mode experiments", () => {
  it(
    "f2-lease-stolen: textbook, both switches change the provider; paused at the save past the hold " +
      "cap, the save is refused",
    async () => {
      const result = await run("f2-lease-stolen");
      const { textbook, pausedAtSave } = result.observed;
      expect(textbook.providerWritesApplied.first).toBeGreaterThan(0);
      expect(textbook.providerWritesApplied.second).toBeGreaterThan(0);
      expect(textbook.auditConsistent).toBe(false);
      expect(pausedAtSave.first).toMatchObject({ status: 409, problemType: "lease-lost" });
      expect(pausedAtSave.second.status).toBe(200);
      // The run ends with the paused-save variant: the second switch's target is the primary, everywhere.
      const record = await saved(result);
      expect(record.snapshots.at(-1)!.localPrimaryIdentityId).toBe("auth0|ada-email");
      expect(lastAudit(record).consistent).toBe(true);
    },
  );

  it("f1-crash-after-acquire: the lease waits out its TTL, then the next switch recovers the crashed one", async () => {
    const result = await run("f1-crash-after-acquire");
    const [, , next] = result.operationIds;
    const record = await saved(result);
    expect(tookOver(record, next!)).toBe(true);
    expect(result.observed.lockedOutMs).toBeGreaterThan(1_000);
    expect(lastAudit(record).consistent).toBe(true);
    // Killed during its link, fencing off and on: the provider applied the link after its caller had gone,
    // and the reconciler (a lane of the run, switching nothing) settled the switch with no further click.
    for (const variant of [result.observed.duringLink.unfenced, result.observed.duringLink.fenced]) {
      expect(variant.link).toEqual({ status: 201, outcome: "client-closed" });
      expect(variant).toMatchObject({
        crashedJournalStep: "unlinked",
        localPrimary: "github|8812",
        auditSettled: true,
      });
      expect(phasesOf(record, variant.crashed.operationId, "link").map((phase) => phase.outcome)).toEqual([
        "client-closed",
      ]);
      expect(record.lanes.some((lane) => lane.operationId === variant.settledBy)).toBe(true);
    }
  });

  it("advisory-not-enforced: the support tool changes the provider under a held lease", async () => {
    const result = await run("advisory-not-enforced");
    const [, support] = result.operationIds;
    const record = await saved(result);
    expect(writesApplied(record, support!)).toBeGreaterThan(0);
    expect(lastAudit(record).consistent).toBe(false);
  });

  it("f4-race-to-acquire: two UPDATEs, one commits, the other updates 0 rows", async () => {
    const result = await run("f4-race-to-acquire");
    expect(result.observed.contenders).toBe(2);
    expect(result.observed.waitingSessions[0].locktype).toMatch(/transactionid|tuple/);
  });

  it("in-process-mutex: safe in one instance, broken across two, the lease holds", async () => {
    const result = await run("in-process-mutex");
    expect(result.observed.secondInstance).toMatch(/simulated/);
    // The run ends with the lease variant: consistent, and the loser's 409 made no provider call.
    expect(lastAudit(await saved(result)).consistent).toBe(true);
  });

  it("f3-release-fails: textbook answers an error for a switch that happened; ours answers 200 and retries", async () => {
    const result = await run("f3-release-fails");
    expect(result.observed.textbook.first.status).toBe(503);
    // The run ends with ours: the lease row was cleared by a retried release (no token left, not an expiry),
    // after the two failures its events record.
    const ours = result.operationIds[2]!;
    const record = await saved(result);
    const end = record.snapshots.at(-1)!;
    expect(end.lease).toMatchObject({ held: false, expiresAt: null });
    expect(end.localPrimaryIdentityId).toBe("github|8812");
    expect(phasesOf(record, ours, "release").filter((phase) => phase.outcome === "failed")).toHaveLength(2);
    // The textbook's switch is drawn as the lease it took: its band, and its one release, failed.
    const textbook = result.operationIds[0]!;
    expect(record.lanes.find((lane) => lane.operationId === textbook)?.lease).not.toBeNull();
    expect(phasesOf(record, textbook, "release").map((phase) => phase.outcome)).toEqual(["failed"]);
  });
});
