import { describe, expect, it } from "vitest";
import { freshLabEachTest } from "./fresh-lab";

const { app, session } = freshLabEachTest();

const adaTargets = ["github|8812", "auth0|ada-email", "apple|001122.ada"];

describe("POST /api/users/{userId}/primary", () => {
  it("switches the primary at the provider and locally", async () => {
    await app.configure({ provider: { latencyMs: 20 } });
    const answer = await session.ada.promote("ada", "github|8812");
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ primaryIdentityId: "github|8812", changed: true });
    expect(answer.body.operationId).toMatch(/^[0-9a-f-]{36}$/);

    const view = await session.ada.get("/api/users/ada");
    expect(view.body.primaryIdentityId).toBe("github|8812");
    expect(view.body.lease).toEqual({ held: false, expiresAt: null });
    expect((await app.audit()).consistent).toBe(true);

    const calls = (await app.provider()).calls;
    expect(calls.map((call: any) => `${call.method} ${call.path} ${call.status}`)).toEqual([
      "DELETE /api/v2/users/google-oauth2|104423/identities/github/8812 200",
      "POST /api/v2/users/github|8812/identities 201",
    ]);
    expect(calls.every((call: any) => call.operationId === answer.body.operationId)).toBe(true);
  });

  it("under `lease`, lets one of many concurrent requests through and answers the rest 409 at once", async () => {
    // Calls of 1.5 s: the first switch holds the lease for 3 s, longer than a busy machine takes to deliver all
    // twelve (at 300 ms, three came one after another on a loaded 2-core machine: 200, 200, 200).
    await app.configure({ strategy: "lease", provider: { latencyMs: 1_500 } });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, index) => session.ada.promote("ada", adaTargets[index % adaTargets.length]!)),
    );

    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(11);
    for (const loser of answers.filter((answer) => answer.status === 409)) {
      expect(loser.headers.get("content-type")).toBe("application/problem+json");
      expect(loser.body.type).toMatch(/\/operation-in-progress$/);
      expect(loser.body.title).toBe("Another operation is already in progress");
      expect(Date.parse(loser.body.expiresAt)).not.toBeNaN();
      expect(Number(loser.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    const audit = await app.audit();
    expect(audit.users.find((user: any) => user.userId === "ada")).toMatchObject({ consistent: true, violations: [] });
    expect(audit.consistent).toBe(true);
    expect((await session.ada.get("/api/users/ada")).body.lease.held).toBe(false);
  });

  it("answers an identity that is already primary with changed: false and no provider call", async () => {
    const answer = await session.ada.promote("ada", "google-oauth2|104423");
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ primaryIdentityId: "google-oauth2|104423", changed: false });
    expect((await app.provider()).calls).toEqual([]);
  });

  it("answers a provider failure 502 with the failing step and frees the lease", async () => {
    await app.configure({ provider: { latencyMs: 10, failureRate: 1 } });
    const answer = await session.ada.promote("ada", "github|8812");
    expect(answer.status).toBe(502);
    expect(answer.body).toMatchObject({ step: "unlink", providerStatus: 503 });
    expect((await session.ada.get("/api/users/ada")).body.lease.held).toBe(false);
    expect((await app.audit()).consistent).toBe(true);
  });

  it(
    "answers 504 with the step when the provider is slower than the lease allows; the provider " +
      "applies the call after its caller left, and the lease is kept until it could land",
    async () => {
      // Renewals keep a lease for at most 3 × TTL (1.5 s here); the provider takes longer. Until its limit
      // (3.5 s) has passed, the unanswered unlink might still be applied: the lease is kept until then.
      await app.configure({
        leaseTtlMs: 500,
        reconcileAfterMs: null,
        provider: { latencyMs: 3_000, applyLimitMs: 3_500 },
      });
      const answer = await session.ada.promote("ada", "github|8812");
      expect(answer.status).toBe(504);
      expect(answer.body).toMatchObject({ step: "unlink" });
      expect((await session.ada.get("/api/users/ada")).body.lease.held).toBe(true);
      await expect.poll(() => session.ada.leaseHeld("ada"), { timeout: 10_000 }).toBe(false);

      // The provider reached the call after the caller gave up, and applied it: a real provider does not
      // undo a request because its caller closed the connection. Its log says so.
      const logged = async () => (await app.calls()).map((call) => [call.status, call.outcome]);
      await expect.poll(logged, { timeout: 10_000 }).toEqual([[200, "client-closed"]]);
      // Split, and not settled: the switch's journal entry waits for its repair (the reconciler is off).
      expect(await app.userAudit("ada")).toMatchObject({
        consistent: false,
        settled: false,
        settlingUntil: null,
        violations: ["github|8812 is orphaned in its own account"],
      });
      await app.configure({ provider: { latencyMs: 10 } });
      expect((await session.ada.promote("ada", "auth0|ada-email")).status).toBe(200);
      expect(await app.userAudit("ada")).toMatchObject({ consistent: true, settled: true, settlingUntil: null });
    },
  );
});
