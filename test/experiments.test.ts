import { describe, expect, inject, it } from "vitest";
import pg from "pg";
import { appClient } from "./harness/http-client";

// Each experiment runs on the app as a teacher's click would, and must reach "as-expected" from what it
// measured; a second assertion checks one of its facts independently (the audit, the provider's log, the
// lease row, the journal).
const app = appClient(inject("appUrl"));

interface Run {
  id: string;
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
  return answer.body;
}

async function query<Row>(text: string, values: unknown[]): Promise<Row | undefined> {
  const client = new pg.Client({ connectionString: inject("databaseUrl") });
  await client.connect();
  try {
    return (await client.query(text, values)).rows[0] as Row | undefined;
  } finally {
    await client.end();
  }
}

const journalOf = (operationId: string) =>
  query<{ step: string; resolved_by: string | null }>(
    "SELECT step, resolved_by FROM switch_journal WHERE operation_id = $1",
    [operationId],
  );

const appliedBy = (calls: { operationId: string | null; status: number }[], operationId: string) =>
  calls.filter((call) => call.operationId === operationId && call.status >= 200 && call.status < 300).length;

describe("the experiments", () => {
  it("lists every experiment with its card; an unknown id is a 404", async () => {
    const { body } = await app.get("/api/lab/experiments");
    for (const card of body.experiments) {
      expect(Object.keys(card)).toEqual(expect.arrayContaining(["id", "title", "question", "failureMode", "expected"]));
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

  it("f2-lease-stolen: textbook, both switches change the provider; paused at the save past the hold cap, the save is refused", async () => {
    const result = await run("f2-lease-stolen");
    const { textbook, pausedAtSave } = result.observed;
    expect(textbook.providerWritesApplied.first).toBeGreaterThan(0);
    expect(textbook.providerWritesApplied.second).toBeGreaterThan(0);
    expect(textbook.auditConsistent).toBe(false);
    expect(pausedAtSave.first).toMatchObject({ status: 409, problemType: "lease-lost" });
    expect(pausedAtSave.second.status).toBe(200);
    // The run ends with the paused-save variant: the second switch's target is the primary, everywhere.
    const ada = await query<{ primary_identity_id: string }>("SELECT primary_identity_id FROM users WHERE id = $1", [
      "ada",
    ]);
    expect(ada?.primary_identity_id).toBe("auth0|ada-email");
    expect((await app.audit()).consistent).toBe(true);
  });

  it("f1-crash-after-acquire: the lease waits out its TTL, then the next switch recovers the crashed one", async () => {
    const result = await run("f1-crash-after-acquire");
    const [crashed, , next] = result.operationIds;
    expect(await journalOf(crashed!)).toEqual({ step: "resolved", resolved_by: next });
    expect(result.observed.lockedOutMs).toBeGreaterThan(1_000);
    expect((await app.audit()).consistent).toBe(true);
  });

  it("q4-lock-column-mapped: mapped, the rename wipes the lease; unmapped, it leaves it alone", async () => {
    const result = await run("q4-lock-column-mapped");
    expect(result.observed.mapped.providerWritesApplied.second).toBeGreaterThan(0);
    expect(result.observed.unmapped.second.status).toBe(409);
    // The run ends with the unmapped variant: its rename reached the provider and the audit holds.
    const calls = await app.calls();
    expect(calls.filter((call: { method: string }) => call.method === "PATCH")).toHaveLength(1);
    expect((await app.audit()).consistent).toBe(true);
  });

  it("advisory-not-enforced: the support tool changes the provider under a held lease", async () => {
    const result = await run("advisory-not-enforced");
    const [, support] = result.operationIds;
    expect(appliedBy(await app.calls(), support!)).toBeGreaterThan(0);
    expect((await app.audit()).consistent).toBe(false);
  });

  it("q3-ttl-too-short: corrupted without safeguards, refused with fencing, stopped in time with the safeguards", async () => {
    const result = await run("q3-ttl-too-short");
    expect(result.observed.textbook.auditConsistent).toBe(false);
    // The last variant's calls: the first switch's link was cut at its deadline and never applied.
    const [, , , , first] = result.operationIds;
    const links = (await app.calls()).filter(
      (call: { operationId: string; method: string }) => call.operationId === first && call.method === "POST",
    );
    expect(links.every((call: { status: number }) => call.status < 200 || call.status >= 300)).toBe(true);
    expect((await app.audit()).consistent).toBe(true);
  });

  it("q2-simultaneous-acquire: one row updated, the others waited and matched 0 rows", async () => {
    const result = await run("q2-simultaneous-acquire");
    expect(result.observed.rowsUpdated).toBe(1);
    // The lease row itself: taken once, its fence one above the seed's.
    const row = await query<{ taken: boolean; fence: string }>(
      "SELECT identity_action_locked_at IS NOT NULL AS taken, identity_action_fence::text AS fence FROM users WHERE id = $1",
      ["ada"],
    );
    expect(row).toEqual({ taken: true, fence: String(Number(result.observed.rowBefore.fence) + 1) });
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
    expect((await app.audit()).consistent).toBe(true);
  });

  it("f3-release-fails: textbook answers an error for a switch that happened; ours answers 200 and retries", async () => {
    const result = await run("f3-release-fails");
    expect(result.observed.textbook.first.status).toBe(500);
    // The run ends with ours: the lease row was cleared by a retried release (no token left, not an expiry),
    // after the two failures its events record.
    const ours = result.operationIds[2]!;
    const row = await query<{ token: string | null; until: Date | null; primary: string }>(
      `SELECT identity_action_lock_token AS token, identity_action_locked_until AS until,
              primary_identity_id AS primary FROM users WHERE id = $1`,
      ["ada"],
    );
    expect(row).toEqual({ token: null, until: null, primary: "github|8812" });
    const failed = await query<{ count: number }>(
      "SELECT count(*)::int AS count FROM operation_events WHERE operation_id = $1 AND kind = 'release-failed'",
      [ours],
    );
    expect(failed?.count).toBe(2);
  });

  it("q3-ttl-too-long: a crash locks the user out for the whole TTL; the sweep recommends a shorter one", async () => {
    const result = await run("q3-ttl-too-long");
    expect(result.observed.sweep.map((point: { ttlMs: number }) => point.ttlMs)).toEqual([
      200, 300, 500, 800, 1_200, 1_600,
    ]);
    expect(result.observed.recommendedTtlMs).toBeLessThan(result.observed.longTtlMs);
    const [crashed, , next] = result.operationIds.slice(-3);
    expect(await journalOf(crashed!)).toEqual({ step: "resolved", resolved_by: next });
    expect(result.observed.crash.lockedOutMs).toBeGreaterThan(4_500);
  });

  it("q5-advisory-or-lease: a dropped connection fails advisory, silently unlocks session-advisory, spares the lease", async () => {
    const result = await run("q5-advisory-or-lease");
    expect(result.observed.sessionAdvisory.secondCalledProviderWhileFirstDid).toBe(true);
    // The run ends with the lease: its first switch applied both writes, the refused second none.
    const [first, second] = result.operationIds.slice(-2);
    const calls = await app.calls();
    expect(appliedBy(calls, first!)).toBeGreaterThanOrEqual(2);
    expect(calls.filter((call: { operationId: string }) => call.operationId === second)).toEqual([]);
    expect((await app.audit()).consistent).toBe(true);
  });

  it("q1-transaction-holds-connections: the pool fills under transaction, not under lease; a rollback keeps the unlink", async () => {
    const result = await run("q1-transaction-holds-connections");
    const [operationId] = result.operationIds.slice(-1);
    const unlinks = (await app.calls()).filter(
      (call: { operationId: string; method: string }) => call.operationId === operationId && call.method === "DELETE",
    );
    expect(unlinks.map((call: { status: number }) => call.status)).toEqual([200]);
    expect((await app.audit()).consistent).toBe(false);
  });
});
