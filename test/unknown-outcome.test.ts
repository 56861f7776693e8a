import { describe, expect, it } from "vitest";
import { freshLabEachTest } from "./fresh-lab";

const { app, session } = freshLabEachTest({ strategy: "lease", reconcileAfterMs: null, provider: { latencyMs: 50 } });

/**
 * The unlink is applied 4 s after it arrived but answered only after the caller left; the caller's
 * deadline (renewals cap a 600 ms lease at 1.8 s) fires before that: the outcome is unknown for a while.
 */
const lateUnlink = {
  leaseTtlMs: 600,
  provider: { applyLimitMs: 5_000, endpoints: { unlink: { latencyMs: 4_000, appliedLateRate: 1 } } },
};
const calmUnlink = { provider: { endpoints: { unlink: { latencyMs: null, appliedLateRate: null } } } };

describe("a provider write whose outcome is unknown", () => {
  it("keeps the lease until the write can no longer land, so nobody reads the provider before it did (the issue's schedule)", async () => {
    await app.configure(lateUnlink);
    const first = await session.ada.promote("ada", "github|8812");
    expect(first.status).toBe(504);
    expect(first.body).toMatchObject({ step: "unlink" });

    // The lease outlives the answer: the call may still land, for up to the provider's limit.
    const view = (await session.ada.get("/api/users/ada")).body;
    expect(view.lease.held).toBe(true);
    await app.configure({ leaseTtlMs: 3_000, ...calmUnlink });
    const refused = await session.ada.promote("ada", "auth0|ada-email");
    expect(refused.status).toBe(409);
    expect(refused.body.expiresAt).toBe(view.lease.expiresAt);

    // The late unlink lands while the lease still keeps everyone out...
    await expect
      .poll(async () => (await app.calls()).map((call) => call.outcome), { timeout: 10_000 })
      .toEqual(["applied-late"]);
    await expect.poll(() => session.ada.leaseHeld("ada"), { timeout: 10_000 }).toBe(false);
    // ...so the next holder's recovery reads the provider as it really is and finishes the switch.
    const next = await session.ada.promote("ada", "auth0|ada-email");
    expect(next.status).toBe(200);
    expect(await app.userAudit("ada")).toMatchObject({ consistent: true, violations: [] });
    const recovered = (await app.events("ada")).find((event) => event.kind === "recovered");
    expect(recovered?.message).toMatch(/it was unlinked but not linked; finished the link\.$/);
  });

  it("with fencing enforced, releases at once: the next holder's fenced read makes the late write be refused when applied", async () => {
    await app.configure({ ...lateUnlink, provider: { ...lateUnlink.provider, enforceFencing: true } });
    expect((await session.ada.promote("ada", "github|8812")).status).toBe(504);
    expect(await session.ada.leaseHeld("ada")).toBe(false);

    await app.configure(calmUnlink);
    const next = await session.ada.promote("ada", "auth0|ada-email");
    expect(next.status).toBe(200);
    // The first unlink arrives at the provider after the fenced read: refused when it is applied.
    await expect
      .poll(async () => (await app.calls()).find((call) => call.path.endsWith("/identities/github/8812"))?.outcome, {
        timeout: 10_000,
      })
      .toBe("fenced");
    expect(await app.userAudit("ada")).toMatchObject({ consistent: true, violations: [] });
    expect((await session.ada.get("/api/users/ada")).body.primaryIdentityId).toBe("auth0|ada-email");
  });
});

describe("the lease's expiry is stored at acquisition", () => {
  it("a lab TTL change while a lease is held leaves that lease's expiresAt unchanged", async () => {
    await app.configure({ leaseTtlMs: 10_000, provider: { latencyMs: 1_500 } });
    const switching = session.ada.promote("ada", "github|8812");
    await expect.poll(() => session.ada.leaseHeld("ada"), { timeout: 10_000 }).toBe(true);
    const before = (await session.ada.get("/api/users/ada")).body.lease.expiresAt;

    await app.configure({ leaseTtlMs: 500 });
    expect((await session.ada.get("/api/users/ada")).body.lease).toEqual({ held: true, expiresAt: before });
    expect((await switching).status).toBe(200);
  });
});

describe("background reconciliation", () => {
  it("settles a switch left half-done by a 502 within seconds of quiescence, with no further click", async () => {
    await app.configure({ reconcileAfterMs: 1_500, provider: { script: { link: ["500"] } } });
    expect((await session.ada.promote("ada", "github|8812")).status).toBe(502);
    expect((await app.userAudit("ada")).consistent).toBe(false);

    await expect.poll(async () => (await app.userAudit("ada")).consistent, { timeout: 10_000 }).toBe(true);
    expect((await session.ada.get("/api/users/ada")).body.primaryIdentityId).toBe("github|8812");
    const messages = (await app.events("ada")).map((event) => event.message);
    expect(messages).toContainEqual(
      expect.stringMatching(/^Recovered switch from google-oauth2\|104423 to github\|8812/),
    );
  });
});
