import { describe, expect, it } from "vitest";
import { freshLabEachTest } from "./fresh-lab";

const { app, session } = freshLabEachTest({ strategy: "lease", reconcileAfterMs: null, provider: { latencyMs: 20 } });

describe("recovery of a half-done switch by the next lease holder", () => {
  it("finishes a switch whose link failed, then does its own work: the audit is consistent again", async () => {
    await app.configure({ provider: { script: { link: ["500"] } } });
    expect((await session.ada.promote("ada", "github|8812")).status).toBe(502);
    expect((await app.userAudit("ada")).violations).toEqual(["github|8812 is orphaned in its own account"]);

    const next = await session.ada.promote("ada", "auth0|ada-email");
    expect(next.status).toBe(200);
    expect((await app.userAudit("ada")).consistent).toBe(true);
    expect((await session.ada.get("/api/users/ada")).body.primaryIdentityId).toBe("auth0|ada-email");
    expect((await app.events("ada")).map((event) => event.message)).toContainEqual(
      expect.stringMatching(
        /^Recovered switch from google-oauth2\|104423 to github\|8812 left by operation .* unlinked but not linked; finished the link\.$/,
      ),
    );
  });

  it("saves the primary of a switch the provider applied but answered late", async () => {
    await app.configure({ leaseTtlMs: 500, provider: { applyLimitMs: 3_000, script: { link: ["applied-late"] } } });
    expect((await session.ada.promote("ada", "github|8812")).status).toBe(504);
    expect((await app.userAudit("ada")).violations).toEqual([
      "provider primary is github|8812, local primary is google-oauth2|104423",
    ]);
    // The link's outcome is unknown to the app: its lease keeps everyone out until the link cannot land.
    expect(await session.ada.leaseHeld("ada")).toBe(true);
    await expect.poll(() => session.ada.leaseHeld("ada"), { timeout: 10_000 }).toBe(false);

    await app.configure({ leaseTtlMs: 10_000 });
    const next = await session.ada.promote("ada", "github|8812");
    expect(next.status).toBe(200);
    expect(next.body.changed).toBe(false);
    expect((await app.userAudit("ada")).consistent).toBe(true);
    expect((await app.events("ada")).map((event) => event.kind)).toContain("recovered");
  });
});

describe("the critical section never outlives its lease", () => {
  it("stops with 409 lease-lost when, after a pause longer than renewals may hold, the lease is no longer its own", async () => {
    // Renewals hold a 500 ms lease for at most 1.5 s; the pause after the unlink lasts 2.5 s.
    await app.configure({ leaseTtlMs: 500, faults: { stall: { at: "unlinked", ms: 2_500 } } });
    const answer = await session.ada.promote("ada", "github|8812");
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ step: "link" });
    expect(answer.body.type).toMatch(/\/lease-lost$/);
    expect((await app.calls()).map((call) => call.method)).toEqual(["DELETE"]);
    expect((await app.events("ada")).map((event) => event.kind)).toContain("lease-lost");
    expect((await app.get("/api/lab")).body.faults.stall).toBeNull();

    // The next holder finishes what the stopped one left.
    await app.configure({ leaseTtlMs: 10_000 });
    expect((await session.ada.promote("ada", "apple|001122.ada")).status).toBe(200);
    expect((await app.userAudit("ada")).consistent).toBe(true);
  });
});

describe("fencing tokens", () => {
  it("with a TTL shorter than the provider latency and fencing enforced, the stolen-lease race is refused by the provider", async () => {
    // The textbook lease (no deadline, no renewal, no checks): the first operation pauses after reading
    // the primary, its 500 ms lease expires, and a second operation takes the lease over.
    await app.configure({
      leaseTtlMs: 500,
      leaseSafeguards: false,
      faults: { stall: { at: "acquired", ms: 4_000 } },
      provider: { latencyMs: 600, enforceFencing: true },
    });
    const stale = session.ada.promote("ada", "github|8812");
    // The first operation has taken its pause (the one-shot fault is used up) and its lease has run out.
    await expect
      .poll(() => app.get("/api/lab").then((answer) => answer.body.faults.stall), { timeout: 10_000 })
      .toBeNull();
    await expect.poll(() => session.ada.leaseHeld("ada"), { timeout: 10_000 }).toBe(false);

    const thief = await session.ada.promote("ada", "auth0|ada-email");
    expect(thief.status, JSON.stringify(thief.body)).toBe(200);
    const refused = await stale;
    expect(refused.status).toBe(409);
    expect(refused.body.type).toMatch(/\/fenced$/);
    expect(refused.body).toMatchObject({ step: "unlink" });

    const fenced = (await app.calls()).filter((call) => call.outcome === "fenced");
    expect(fenced).toHaveLength(1);
    expect(fenced[0]).toMatchObject({ method: "DELETE", status: 409 });
    expect(fenced[0]!.operationId).not.toBe(thief.body.operationId);
    expect((await app.events("ada")).map((event) => event.kind)).toEqual(
      expect.arrayContaining(["lease-taken-over", "fenced"]),
    );
    expect((await app.userAudit("ada")).consistent).toBe(true);
    expect((await session.ada.get("/api/users/ada")).body.primaryIdentityId).toBe("auth0|ada-email");
  });
});

describe("a failed release is not the operation's failure", () => {
  it("answers 200 when the release fails once; the background retry frees the lease", async () => {
    await app.configure({ faults: { releaseFailures: 1 } });
    const answer = await session.ada.promote("ada", "github|8812");
    expect(answer.status).toBe(200);
    expect(answer.body.primaryIdentityId).toBe("github|8812");
    await expect.poll(() => session.ada.leaseHeld("ada"), { timeout: 10_000 }).toBe(false);
    expect((await app.events("ada")).map((event) => event.kind)).toEqual(["release-failed"]);
  });

  it("answers 200 when every release attempt fails; the TTL frees the lease and the next switch succeeds", async () => {
    // A TTL long enough that the lease is still seen held, and refusing, after the answer on a loaded machine.
    await app.configure({ leaseTtlMs: 3_000, faults: { releaseFailures: 10 } });
    const first = await session.ada.promote("ada", "github|8812");
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(await session.ada.leaseHeld("ada")).toBe(true);
    expect((await session.ada.promote("ada", "auth0|ada-email")).status).toBe(409);

    await app.configure({ faults: { releaseFailures: 0 } });
    await expect.poll(() => session.ada.leaseHeld("ada"), { timeout: 10_000 }).toBe(false);
    const next = await session.ada.promote("ada", "auth0|ada-email");
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect((await app.userAudit("ada")).consistent).toBe(true);
  });
});

describe("Idempotency-Key", () => {
  it("answers a repeat with the first answer, without calling the provider again", async () => {
    const first = await session.ada.promote("ada", "github|8812", { "Idempotency-Key": "switch-1" });
    expect(first.status).toBe(200);
    const repeat = await session.ada.promote("ada", "github|8812", { "Idempotency-Key": "switch-1" });
    expect(repeat.status).toBe(200);
    expect(repeat.body).toEqual(first.body);
    expect(await app.calls()).toHaveLength(2);
  });

  it("keeps a failure's answer too", async () => {
    await app.configure({ provider: { script: { unlink: ["500"] } } });
    const first = await session.ada.promote("ada", "github|8812", { "Idempotency-Key": "switch-2" });
    expect(first.status).toBe(502);
    const repeat = await session.ada.promote("ada", "github|8812", { "Idempotency-Key": "switch-2" });
    expect(repeat.status).toBe(502);
    expect(repeat.headers.get("content-type")).toBe("application/problem+json");
    expect(repeat.body).toEqual(first.body);
    expect(await app.calls()).toHaveLength(1);
  });

  it("keeps no answer of a request refused before it began: a 404 leaves the key free for the request meant", async () => {
    const refused = await session.ada.promote("ada", "github|1906", { "Idempotency-Key": "switch-5" });
    expect(refused.status).toBe(404);
    const meant = await session.ada.promote("ada", "github|8812", { "Idempotency-Key": "switch-5" });
    expect(meant.status).toBe(200);
    expect(meant.body).toMatchObject({ primaryIdentityId: "github|8812", changed: true });
  });

  it("answers the same key with a different body 422 and changes nothing", async () => {
    expect((await session.ada.promote("ada", "github|8812", { "Idempotency-Key": "switch-3" })).status).toBe(200);
    const reused = await session.ada.promote("ada", "auth0|ada-email", { "Idempotency-Key": "switch-3" });
    expect(reused.status).toBe(422);
    expect(reused.body.type).toMatch(/\/idempotency-key-reused$/);
    expect((await session.ada.get("/api/users/ada")).body.primaryIdentityId).toBe("github|8812");
    expect(await app.calls()).toHaveLength(2);
  });

  it("runs concurrent repeats of one key once", async () => {
    await app.configure({ provider: { latencyMs: 300 } });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => session.ada.promote("ada", "github|8812", { "Idempotency-Key": "switch-4" })),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 409)).toHaveLength(4);
    expect(await app.calls()).toHaveLength(2);
    const afterwards = await session.ada.promote("ada", "github|8812", { "Idempotency-Key": "switch-4" });
    expect(afterwards.body).toEqual(answers.find((answer) => answer.status === 200)!.body);
  });

  it("refuses a key longer than 255 characters with 400", async () => {
    const answer = await session.ada.promote("ada", "github|8812", { "Idempotency-Key": "k".repeat(256) });
    expect(answer.status).toBe(400);
    expect(answer.body.errors.map((error: { field: string }) => error.field)).toContain("Idempotency-Key");
    expect(await app.calls()).toEqual([]);
  });
});

describe("a recovery that cannot reach the provider", () => {
  it("answers 502 recovery-failed, frees the lease, and leaves the switch for the next holder", async () => {
    await app.configure({ provider: { script: { link: ["500"], get: ["500"] } } });
    expect((await session.ada.promote("ada", "github|8812")).status).toBe(502);

    const blocked = await session.ada.promote("ada", "auth0|ada-email");
    expect(blocked.status).toBe(502);
    expect(blocked.body.type).toMatch(/\/recovery-failed$/);
    expect(blocked.body).toMatchObject({ step: "recover", providerStatus: 500 });
    expect(await session.ada.leaseHeld("ada")).toBe(false);

    const next = await session.ada.promote("ada", "auth0|ada-email");
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect((await app.userAudit("ada")).consistent).toBe(true);
  });
});
