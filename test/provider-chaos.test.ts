import { randomUUID } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { freshLabEachTest } from "./fresh-lab";
import { providerFor } from "./harness/provider";

// A short provider limit: after a call whose answer was lost, the lease is kept only this long. Long enough still
// that the lease is seen held after the answer on a loaded machine, behind a balancer and a pooler too.
const { app, session } = freshLabEachTest({
  strategy: "lease",
  reconcileAfterMs: null,
  provider: { latencyMs: 20, applyLimitMs: 3_000 },
});

/** After a call whose outcome is unknown, the lease is kept until the call cannot land, then freed. */
async function leaseKeptThenFreed(): Promise<void> {
  expect(await session.ada.leaseHeld("ada")).toBe(true);
  await expect.poll(() => session.ada.leaseHeld("ada"), { timeout: 10_000 }).toBe(false);
}

describe("the provider honours each chaos knob, and the lease is free after every failure", () => {
  it("error rate with a chosen status, per endpoint: link answers 500, the unlink it follows is left half-done", async () => {
    await app.configure({ provider: { endpoints: { link: { failureRate: 1, errorStatus: 500 } } } });
    const answer = await session.ada.promote("ada", "github|8812");
    expect(answer.status).toBe(502);
    expect(answer.body).toMatchObject({ step: "link", providerStatus: 500 });
    expect(await session.ada.leaseHeld("ada")).toBe(false);
    expect((await app.userAudit("ada")).violations).toEqual(["github|8812 is orphaned in its own account"]);
  });

  it("network-error rate: no HTTP answer at all; the client retries, then gives up", async () => {
    await app.configure({ provider: { endpoints: { unlink: { networkErrorRate: 1 } } } });
    const answer = await session.ada.promote("ada", "github|8812");
    expect(answer.status).toBe(502);
    expect(answer.body).toMatchObject({ step: "unlink", providerStatus: null });
    await leaseKeptThenFreed();
    expect((await app.calls()).map((call) => [call.status, call.outcome])).toEqual(Array(4).fill([0, "network-error"]));
    expect((await app.userAudit("ada")).consistent).toBe(true);
  });

  it("timeout rate: the call hangs until the caller's deadline aborts it", async () => {
    await app.configure({ leaseTtlMs: 500, provider: { endpoints: { link: { timeoutRate: 1 } } } });
    const answer = await session.ada.promote("ada", "github|8812");
    expect(answer.status).toBe(504);
    expect(answer.body).toMatchObject({ step: "link", title: "The switch's deadline ran out" });
    await leaseKeptThenFreed();
    await expect
      .poll(async () => (await app.calls()).map((call) => call.outcome), { timeout: 10_000 })
      .toEqual([null, "timeout"]);
    expect((await app.userAudit("ada")).violations).toEqual(["github|8812 is orphaned in its own account"]);
  });

  it("429 with a Retry-After the deadline cannot wait for: the client gives up at once with 504", async () => {
    await app.configure({ leaseTtlMs: 1_500, provider: { rateLimitRate: 1, retryAfterSeconds: 5 } });
    const answer = await session.ada.promote("ada", "github|8812");
    expect(answer.status).toBe(504);
    expect(answer.body).toMatchObject({ step: "unlink" });
    expect((await app.calls()).map((call) => call.status)).toEqual([429]);
    expect(await session.ada.leaseHeld("ada")).toBe(false);
    expect((await app.userAudit("ada")).consistent).toBe(true);
  });

  it("429 with a short Retry-After: the client waits as told, retries, and the switch succeeds", async () => {
    await app.configure({ provider: { retryAfterSeconds: 1, script: { unlink: ["429"] } } });
    const answer = await session.ada.promote("ada", "github|8812");
    expect(answer.status).toBe(200);
    const log = (await app.provider()).calls as { status: number; at: string }[];
    expect(log.map((call) => call.status)).toEqual([429, 200, 201]);
    expect(Date.parse(log[1]!.at) - Date.parse(log[0]!.at)).toBeGreaterThanOrEqual(1_000);
    expect((await app.userAudit("ada")).consistent).toBe(true);
  });

  it("applied but answered late: the provider commits, the caller times out, the audit shows the split", async () => {
    await app.configure({ leaseTtlMs: 500, provider: { endpoints: { link: { appliedLateRate: 1 } } } });
    const answer = await session.ada.promote("ada", "github|8812");
    expect(answer.status).toBe(504);
    expect(answer.body).toMatchObject({ step: "link" });
    await leaseKeptThenFreed();
    await expect
      .poll(async () => (await app.calls()).map((call) => [call.status, call.outcome]), { timeout: 10_000 })
      .toEqual([
        [200, null],
        [201, "applied-late"],
      ]);
    expect((await app.userAudit("ada")).violations).toEqual([
      "provider primary is github|8812, local primary is google-oauth2|104423",
    ]);
  });

  it("a script of one-shot outcomes per endpoint plays in order, then the provider is calm again", async () => {
    await app.configure({ provider: { script: { link: ["ok", "500"] } } });
    expect((await session.ada.promote("ada", "github|8812")).status).toBe(200);
    const second = await session.ada.promote("ada", "auth0|ada-email");
    expect(second.status).toBe(502);
    expect(second.body).toMatchObject({ step: "link", providerStatus: 500 });
    expect((await app.get("/api/lab")).body.provider.script.link).toEqual([]);
    expect((await app.calls()).map((call) => call.status)).toEqual([200, 201, 200, 500]);
  });

  it("uniform latency: every call takes at least the minimum", async () => {
    await app.configure({ provider: { latencyMode: "uniform", minLatencyMs: 150, maxLatencyMs: 200 } });
    expect((await session.ada.promote("ada", "github|8812")).status).toBe(200);
    expect((await app.calls()).map((call) => call.durationMs >= 150)).toEqual([true, true]);
  });

  it("a seeded random source makes a run repeatable", async () => {
    const settings = { provider: { seed: 4242, latencyMs: 0, endpoints: { unlink: { failureRate: 0.5 } } } };
    const run = async () => {
      await app.reset();
      await app.configure(settings);
      const statuses: number[] = [];
      for (const target of [
        "github|8812",
        "auth0|ada-email",
        "apple|001122.ada",
        "google-oauth2|104423",
        "github|8812",
        "auth0|ada-email",
      ]) {
        statuses.push((await session.ada.promote("ada", target)).status);
      }
      return statuses;
    };
    const first = await run();
    expect(first).toContain(502);
    expect(first).toContain(200);
    expect(await run()).toEqual(first);
  });
});

describe("a call the provider has received is applied whether its caller stays or not", () => {
  const unlinkGithub = "/api/v2/users/google-oauth2%7C104423/identities/github/8812";
  /** The unlink, sent straight to the provider as any client would; `leaveAfterMs`: the caller then goes. */
  async function unlink(headers: Record<string, string> = {}, leaveAfterMs?: number) {
    const provider = await providerFor(inject("databaseUrl"));
    const operationId = randomUUID();
    const signal = leaveAfterMs === undefined ? undefined : AbortSignal.timeout(leaveAfterMs);
    const answer = await fetch(`${provider}${unlinkGithub}`, {
      method: "DELETE",
      headers: { "X-Operation-Id": operationId, ...headers },
      signal,
    }).then(
      async (response) => ({ status: response.status, body: await response.json() }),
      () => "gone" as const,
    );
    return { operationId, answer };
  }
  const githubAccount = async () =>
    ((await app.provider()).accounts as { user_id: string; identities: { user_id: string }[] }[]).find((account) =>
      account.identities.some((identity) => identity.user_id === "8812"),
    )!.user_id;
  const loggedOf = async (operationId: string) =>
    (await app.calls()).filter((call) => call.operationId === operationId).map((call) => [call.status, call.outcome]);

  it("a caller that leaves before the answer: applied anyway, its log line says the caller had gone", async () => {
    await app.configure({ provider: { latencyMs: 600 } });
    const { operationId, answer } = await unlink({}, 100);
    expect(answer).toBe("gone");
    expect(await githubAccount()).toBe("google-oauth2|104423");
    await expect.poll(() => loggedOf(operationId), { timeout: 5_000 }).toEqual([[200, "client-closed"]]);
    expect(await githubAccount()).toBe("github|8812");
  });

  it("a call whose own deadline header has passed when the provider gets to it: not applied, its caller there or not", async () => {
    await app.configure({ provider: { latencyMs: 600 } });
    const waited = await unlink({ "X-Deadline-Ms": "200" });
    expect(waited.answer).toMatchObject({ status: 504, body: { errorCode: "deadline_exceeded" } });
    expect(await loggedOf(waited.operationId)).toEqual([[504, "deadline-passed"]]);

    const left = await unlink({ "X-Deadline-Ms": "200" }, 100);
    await expect.poll(() => loggedOf(left.operationId), { timeout: 5_000 }).toEqual([[504, "deadline-passed"]]);
    expect(await githubAccount()).toBe("google-oauth2|104423");

    // A deadline it meets: applied, though its caller left before the answer.
    const meets = await unlink({ "X-Deadline-Ms": "2000" }, 100);
    await expect.poll(() => loggedOf(meets.operationId), { timeout: 5_000 }).toEqual([[200, "client-closed"]]);
    expect(await githubAccount()).toBe("github|8812");
  });
});

describe("chaos settings are validated", () => {
  it.each([
    ["rates that add up to more than 1", { provider: { failureRate: 0.6, timeoutRate: 0.6 } }, "body.provider"],
    [
      "an endpoint's rates that add up to more than 1",
      { provider: { endpoints: { link: { networkErrorRate: 0.7, appliedLateRate: 0.7 } } } },
      "body.provider.endpoints.link",
    ],
    [
      "uniform bounds the wrong way round",
      { provider: { minLatencyMs: 900, maxLatencyMs: 100 } },
      "body.provider.minLatencyMs",
    ],
    ["an error status other than 500 or 503", { provider: { errorStatus: 418 } }, "body.provider.errorStatus"],
    ["an unknown scripted outcome", { provider: { script: { link: ["explode"] } } }, "body.provider.script.link.0"],
    ["an unknown endpoint", { provider: { endpoints: { refresh: {} } } }, "body.provider.endpoints.refresh"],
    ["a pool of 0", { poolSize: 0 }, "body.poolSize"],
  ])("refuses %s with 400 and changes nothing", async (_name, patch, field) => {
    const before = (await app.get("/api/lab")).body;
    const answer = await app.put("/api/lab", patch);
    expect(answer.status).toBe(400);
    expect(answer.body.errors.map((error: { field: string }) => error.field)).toContain(field);
    expect((await app.get("/api/lab")).body).toEqual(before);
  });
});
