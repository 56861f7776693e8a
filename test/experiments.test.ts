import { describe, expect, inject, it } from "vitest";
import { appClient } from "./harness/http-client";

// Each experiment runs on the app as a teacher's click would, and must reach "as-expected" from what it
// measured; a second assertion checks one of its facts independently, from the saved run (its lanes, as
// the timeline recorded them, and what it read of the provider, the lease row and the audit): the run
// itself puts the lab back as it found it.
const app = appClient(inject("appUrl"));

interface Run {
  id: string;
  runId: string;
  startedAt: string;
  endedAt: string;
  operationIds: string[];
  observed: Record<string, any>;
  verdict: string;
  explanation: string;
}

async function run(id: string): Promise<Run> {
  const answer = await app.post<Run>(`/api/lab/experiments/${id}/run`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body.verdict, JSON.stringify(answer.body.observed, null, 1)).toBe("as-expected");
  expect(Date.parse(answer.body.endedAt) - Date.parse(answer.body.startedAt)).toBeLessThan(30_000);
  // Each variant of the saved run is captioned by what sets it apart, no two alike.
  const labels = (await saved(answer.body)).variants.map((variant) => variant.label);
  expect(new Set(labels).size, labels.join(" | ")).toBe(labels.length);
  return answer.body;
}

interface Phase {
  name: string;
  outcome: string | null;
}

interface SavedRun {
  variants: { label: string }[];
  lanes: { operationId: string; phases: Phase[]; lease: { acquiredAt: string } | null }[];
  history: { f: string; type: string }[];
  snapshots: {
    localPrimaryIdentityId: string | null;
    lease: { held: boolean; expiresAt: string | null; fence: string } | null;
    audit: { consistent: boolean; violations: string[] } | null;
  }[];
}

const saved = async (result: Run): Promise<SavedRun> => (await app.get(`/api/lab/runs/${result.runId}`)).body;
const phasesOf = (run: SavedRun, operationId: string, name?: string): Phase[] =>
  run.lanes
    .find((lane) => lane.operationId === operationId)!
    .phases.filter((phase) => (name ? phase.name === name : true));
/** The provider writes (unlink, link) an operation got a 2xx for, as its lane recorded them. */
const writesApplied = (run: SavedRun, operationId: string): number =>
  phasesOf(run, operationId).filter(
    (phase) => (phase.name === "unlink" || phase.name === "link") && /^2\d\d$/.test(phase.outcome ?? ""),
  ).length;
/** The audit read as the run's last variant ended. */
const lastAudit = (run: SavedRun) => run.snapshots.findLast((snapshot) => snapshot.audit)!.audit!;
const tookOver = (run: SavedRun, operationId: string): boolean =>
  phasesOf(run, operationId, "acquire").some((phase) => phase.outcome === "took-over");

describe("the experiments", () => {
  it("lists every experiment with its card; an unknown id is a 404", async () => {
    const { body } = await app.get("/api/lab/experiments");
    for (const card of body.experiments) {
      expect(Object.keys(card)).toEqual(expect.arrayContaining(["id", "title", "question", "failureMode", "expected"]));
      // Its lesson in the course: minutes, and the prediction asked before it runs.
      expect(typeof card.minutes).toBe("number");
      const ids = card.prediction.choices.map((choice: { id: string }) => choice.id);
      expect(ids.length).toBeGreaterThanOrEqual(2);
      expect(ids.length).toBeLessThanOrEqual(4);
      expect(ids).toContain(card.prediction.answer);
    }
    const unknown = await app.post("/api/lab/experiments/no-such-thing/run");
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toContain("application/problem+json");
    expect((await app.post("/api/lab/experiments/BAD%20ID/run")).status).toBe(400);
  });

  it("a second run while one runs is a 409", async () => {
    // Sent together, either may arrive first (a cold app reorders them): one runs, the other is refused.
    const answers = await Promise.all([
      app.post("/api/lab/experiments/f1-crash-after-acquire/run"),
      app.post("/api/lab/experiments/f2-lease-stolen/run"),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
  });

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

  it("q4-lock-column-mapped: mapped, the rename wipes the lease; unmapped, it leaves it alone", async () => {
    const result = await run("q4-lock-column-mapped");
    expect(result.observed.mapped).toMatchObject({
      leaseHeldAfterRename: false,
      secondCalledProviderWhileFirstDid: true,
    });
    expect(result.observed.unmapped.second.status).toBe(409);
    // The run ends with the unmapped variant: its rename succeeded and the audit holds.
    const record = await saved(result);
    expect(record.history.filter((op) => op.f === "rename" && op.type !== "invoke").at(-1)!.type).toBe("ok");
    expect(lastAudit(record).consistent).toBe(true);
  });

  it("advisory-not-enforced: the support tool changes the provider under a held lease", async () => {
    const result = await run("advisory-not-enforced");
    const [, support] = result.operationIds;
    const record = await saved(result);
    expect(writesApplied(record, support!)).toBeGreaterThan(0);
    expect(lastAudit(record).consistent).toBe(false);
  });

  it("q3-ttl-too-short: overlapping without safeguards, refused with fencing, stopped in time with the safeguards", async () => {
    const result = await run("q3-ttl-too-short");
    // Without safeguards the second switch gets in and calls the provider while the first still does.
    expect(result.observed.textbook.second.status).not.toBe(409);
    expect(result.observed.textbook.secondCalledProviderWhileFirstDid).toBe(true);
    // The last variant's calls: the first switch's link was cut at its deadline, never answered.
    const [, , , , first] = result.operationIds;
    const record = await saved(result);
    expect(phasesOf(record, first!, "link").every((phase) => !/^2\d\d$/.test(phase.outcome ?? ""))).toBe(true);
    expect(lastAudit(record).consistent).toBe(true);
  });

  it("q2-simultaneous-acquire: one row updated, the others waited and matched 0 rows", async () => {
    const result = await run("q2-simultaneous-acquire");
    expect(result.observed.rowsUpdated).toBe(1);
    // The lease row itself, as the run read it at its end: taken once, its fence one above the seed's.
    const record = await saved(result);
    const lease = record.snapshots.at(-1)!.lease!;
    expect(lease.expiresAt).not.toBeNull();
    expect(lease.fence).toBe(String(Number(result.observed.rowBefore.fence) + 1));
    // Every contender is drawn: one acquire won (its lease band), the others refused.
    const acquires = record.lanes.map((lane) => lane.phases.find((phase) => phase.name === "acquire")?.outcome);
    expect(acquires.filter((outcome) => outcome === "won")).toHaveLength(1);
    expect(acquires.filter((outcome) => outcome === "refused")).toHaveLength(result.observed.contenders - 1);
    expect(record.lanes.filter((lane) => lane.lease !== null)).toHaveLength(1);
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

  it("q3-ttl-too-long: a crash locks the user out for the whole TTL; the sweep recommends a shorter one", async () => {
    const result = await run("q3-ttl-too-long");
    expect(result.observed.sweep.map((point: { ttlMs: number }) => point.ttlMs)).toEqual([
      200, 300, 500, 800, 1_200, 1_600,
    ]);
    expect(result.observed.recommendedTtlMs).toBeLessThan(result.observed.longTtlMs);
    const [, , next] = result.operationIds.slice(-3);
    expect(tookOver(await saved(result), next!)).toBe(true);
    expect(result.observed.crash.lockedOutMs).toBeGreaterThan(4_500);
  });

  it("q5-advisory-or-lease: a dropped connection fails advisory, silently unlocks session-advisory, spares the lease", async () => {
    const result = await run("q5-advisory-or-lease");
    expect(result.observed.sessionAdvisory.secondCalledProviderWhileFirstDid).toBe(true);
    // The run ends with the lease: its first switch applied both writes, the refused second none.
    const [first, second] = result.operationIds.slice(-2);
    const record = await saved(result);
    expect(writesApplied(record, first!)).toBeGreaterThanOrEqual(2);
    expect(phasesOf(record, second!).filter((phase) => ["unlink", "link"].includes(phase.name))).toEqual([]);
    expect(lastAudit(record).consistent).toBe(true);
  });

  it("q1-transaction-holds-connections: the pool fills under transaction, not under lease; a rollback keeps the unlink", async () => {
    const result = await run("q1-transaction-holds-connections");
    const [operationId] = result.operationIds.slice(-1);
    const record = await saved(result);
    expect(phasesOf(record, operationId!, "unlink").map((phase) => phase.outcome)).toEqual(["200"]);
    expect(lastAudit(record).consistent).toBe(false);
  });
});
