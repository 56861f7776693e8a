// The Learn cards' questions (q1-q5), and the list and its refusals: each run as a teacher's click would
// (test/harness/experiment-runs.ts). The failure modes: experiments-failure-modes.test.ts.
import { describe, expect, it } from "vitest";
import { run, saved, phasesOf, writesApplied, lastAudit, tookOver, labApp } from "./harness/experiment-runs";

const app = labApp();

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

  it("while a run goes on, a change of the lab's settings or a reset is a 409 and changes nothing", async () => {
    const before = (await app.get("/api/lab")).body;
    const running = app.post("/api/lab/experiments/f1-crash-after-acquire/run");
    // The same settings again, until the run holds the lab: a change asked for before it would be its start.
    await expect
      .poll(async () => (await app.put("/api/lab", { leaseTtlMs: before.leaseTtlMs })).status, { timeout: 10_000 })
      .toBe(409);
    const change = await app.put("/api/lab", { leaseTtlMs: before.leaseTtlMs + 1_000 });
    const reset = await app.post("/api/lab/reset");
    for (const refused of [change, reset]) {
      expect(refused.status).toBe(409);
      expect(refused.body.type).toMatch(/\/experiment-running$/);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    expect((await running).status).toBe(200);
    // Its end put back what it found, and nothing of the refused change: a change now is one.
    expect((await app.get("/api/lab")).body).toEqual(before);
    const after = await app.put("/api/lab", { leaseTtlMs: before.leaseTtlMs + 1_000 });
    expect(after.status).toBe(200);
    expect(after.body.leaseTtlMs).toBe(before.leaseTtlMs + 1_000);
    await app.put("/api/lab", { leaseTtlMs: before.leaseTtlMs });
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
