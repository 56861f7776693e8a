import { describe, expect, inject, it } from "vitest";
import { appClient } from "./harness/http-client";

// Saved runs: every experiment run is stored under its runId, reopened whole, exported and imported
// again; and a run leaves the lab as it found it (its sandbox).
const app = appClient(inject("appUrl"));

describe("saved runs", () => {
  it("a run is saved under its runId, and the lab is put back as the run found it", async () => {
    await app.reset();
    await app.configure({ leaseTtlMs: 7_000, provider: { latencyMs: 300 } });
    const signedIn = await app.signedIn("ada");
    expect((await signedIn.promote("ada", "apple|001122.ada")).status).toBe(200);
    const before = { settings: (await app.get("/api/lab")).body, provider: (await app.provider()).accounts };

    const answer = await app.post("/api/lab/experiments/advisory-not-enforced/run");
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.runId).toMatch(/^[0-9a-f-]{36}$/);

    // The sandbox: the settings, the provider's accounts, the user row and the audit as before the run.
    expect((await app.get("/api/lab")).body).toEqual(before.settings);
    expect((await app.provider()).accounts).toEqual(before.provider);
    expect((await signedIn.get("/api/users/ada")).body.primaryIdentityId).toBe("apple|001122.ada");
    expect((await app.audit()).consistent).toBe(true);

    const saved = await app.get(`/api/lab/runs/${answer.body.runId}`);
    expect(saved.status).toBe(200);
    const run = saved.body;
    expect(run).toMatchObject({
      id: answer.body.runId,
      experimentId: "advisory-not-enforced",
      startedAt: answer.body.startedAt,
      endedAt: answer.body.endedAt,
      verdict: answer.body.verdict,
      explanation: answer.body.explanation,
    });
    // Both requests of the run have a lane (the support tool's drawn from the provider's log) and a
    // Jepsen history: an invoke and a completion each; the run's own damage is in its last audit.
    expect(run.lanes.map((lane: { operationId: string }) => lane.operationId).sort()).toEqual(
      [...answer.body.operationIds].sort(),
    );
    for (const operationId of answer.body.operationIds) {
      const ops = run.history.filter((op: { operationId: string }) => op.operationId === operationId);
      expect(ops.map((op: { type: string }) => op.type)[0]).toBe("invoke");
      expect(["ok", "fail", "info"]).toContain(ops[1].type);
      expect(Object.keys(ops[0])).toEqual(expect.arrayContaining(["process", "type", "f", "value", "at"]));
    }
    const support = run.lanes.find((lane: { strategy: string }) => lane.strategy === "support tool (no lock)");
    expect(support.phases.map((phase: { name: string }) => phase.name)).toContain("unlink");
    expect(run.variants).toHaveLength(1);
    expect(run.snapshots.findLast((snapshot: { audit: unknown }) => snapshot.audit).audit.consistent).toBe(false);
    expect(run.steps.at(-1).text).toMatch(/the audit finds/);
  });

  it("an unknown run is a 404, a malformed id a 400, both problem+json", async () => {
    const unknown = await app.get("/api/lab/runs/00000000-0000-4000-8000-000000000000");
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toContain("application/problem+json");
    expect((await app.get("/api/lab/runs/not-a-run")).status).toBe(400);
    // Its page too is a 404 page, where it answered 200 and "Loading the saved run…" for any id.
    for (const runId of ["00000000-0000-4000-8000-000000000000", "not-a-run"]) {
      const page = await fetch(`${inject("appUrl")}/learn/runs/${runId}`);
      expect(page.status, runId).toBe(404);
      expect(await page.text()).not.toContain("Loading the saved run");
    }
    const saved = await app.post("/api/lab/experiments/f4-race-to-acquire/run");
    const page = await fetch(`${inject("appUrl")}/learn/runs/${saved.body.runId}`);
    expect(page.status).toBe(200);
    await page.body?.cancel();
  });

  it("an exported run imports again as a new run with the same content; a bad file is a 400 that saves nothing", async () => {
    const answer = await app.post("/api/lab/experiments/f4-race-to-acquire/run");
    expect(answer.status).toBe(200);
    const exported = (await app.get(`/api/lab/runs/${answer.body.runId}`)).body;

    const imported = await app.post("/api/lab/runs", exported);
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    expect(imported.body.id).not.toBe(exported.id);
    const reopened = (await app.get(`/api/lab/runs/${imported.body.id}`)).body;
    expect(reopened).toEqual({ ...exported, id: imported.body.id, imported: true });

    const bad = await app.post("/api/lab/runs", { ...exported, verdict: "maybe", extra: 1 });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toContain("application/problem+json");
    expect(bad.body.errors.map((error: { field: string }) => error.field)).toEqual(
      expect.arrayContaining(["body.verdict"]),
    );
    const history = [{ ...exported.history[0], type: "maybe" }];
    expect((await app.post("/api/lab/runs", { ...exported, history })).status).toBe(400);
    expect((await app.post("/api/lab/runs", [])).status).toBe(400);
    // Fields each well formed that say together what no run of this lab is.
    const fieldsRefused = async (file: unknown) => {
      const answer = await app.post("/api/lab/runs", file);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      return answer.body.errors.map((error: { field: string }) => error.field);
    };
    expect(exported.variants.length).toBeGreaterThan(0);
    expect(await fieldsRefused({ ...exported, experimentId: "no-such-experiment" })).toEqual(["body.experimentId"]);
    expect(await fieldsRefused({ ...exported, endedAt: "2000-01-01T00:00:00.000Z" })).toEqual(["body.endedAt"]);
    const twice = [exported.variants[0], { ...exported.variants[0] }];
    expect(await fieldsRefused({ ...exported, variants: twice })).toEqual(["body.variants.1.label"]);
  });
});
