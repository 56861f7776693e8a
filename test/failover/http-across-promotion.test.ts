import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startApp, type RunningApp } from "../harness/app-server";
import { appClient } from "../harness/http-client";
import { countByStatus } from "../../lib/core/status-counts";
import { switchLoad } from "../harness/switch-load";
import { startChildProvider } from "../../lib/lab/provider-process-control";
import { cluster, failover, failoverPorts, offClusterDatabase } from "./cluster";

let app: RunningApp;

beforeAll(async () => {
  // The provider keeps its state off the pair, as under --replica and --ha: a promotion loses none of its writes.
  const stateUrl = await offClusterDatabase("failover_http_provider");
  const provider = await startChildProvider(inject("databaseUrl"), stateUrl);
  app = await startApp({
    databaseUrl: inject("databaseUrl"),
    port: failoverPorts().apps,
    env: { IDP_BASE_URL: provider, PROVIDER_DATABASE_URL: stateUrl },
  });
  await appClient(app.baseUrl).configure({
    leaseTtlMs: 2_000,
    reconcileAfterMs: 500,
    provider: { latencyMode: "fixed", latencyMs: 100, jitterMs: 0 },
  });
});

afterAll(() => app?.stop());

describe("the app across a promotion (a primary with a synchronous standby)", () => {
  it("8 users switching while the primary dies and the standby is promoted: no 500, and a consistent audit once settled", async () => {
    const load = await switchLoad(app.baseUrl, 8);
    const switched = (after: number) => load.answers.some((answer) => answer.at > after && answer.status === 200);
    await expect.poll(() => switched(0), { timeout: 10_000, interval: 50 }).toBe(true);
    const promotedAt = await failover().then(() => load.answers.at(-1)?.at ?? 0);
    // The switches go on after it: the pool, the listener and the reconciler follow the new primary. A user
    // whose switch was in flight at the kill waits until its calls can no longer land (the lease's expiry plus
    // the provider's apply limit, 10 s) and the reconciler has settled it; a user with none in flight, not at all.
    await expect.poll(() => switched(promotedAt), { timeout: 30_000, interval: 100 }).toBe(true);
    await load.stop();
    const counts = countByStatus(load.answers);
    const others = load.answers.filter((answer) => ![200, 409, 503].includes(answer.status));
    const when = others.map(({ at, status, problemType }) => `${status} ${problemType} at ${at - promotedAt} ms`);
    console.log(`answers around the promotion: ${JSON.stringify(counts)}; others, from the promotion: ${when}`);
    expect(Object.keys(counts).every((status) => ["200", "409", "503"].includes(status))).toBe(true);
    for (const answer of load.answers.filter((each) => each.status !== 200)) {
      expect(answer.contentType).toBe("application/problem+json");
      const slug = answer.problemType?.split("/").at(-1);
      // 503: the database during the promotion. 409: the lease is held (come back then), or was lost while the
      // database was away (the switch stopped before its next step, or its save changed nothing).
      expect(answer.status === 503 ? ["database-unavailable"] : ["operation-in-progress", "lease-lost"]).toContain(
        slug,
      );
      if (slug !== "lease-lost") expect(answer.retryAfter).toMatch(/^\d+$/);
    }
    const client = appClient(app.baseUrl);
    await expect.poll(async () => (await client.audit()).settled, { timeout: 60_000, interval: 250 }).toBe(true);
    expect((await client.audit()).consistent).toBe(true);
  });

  it("an app whose database is a standby (as a pooled connection to a demoted node): a write answers 503, never 500", async () => {
    const standby = (await cluster()).nodes.find((node) => node.role === "standby")!;
    const url = new URL(inject("databaseUrl"));
    const onStandby = new URL(standby.url);
    onStandby.pathname = url.pathname;
    const port = failoverPorts().apps + 1;
    const reader = await startApp({ databaseUrl: onStandby.toString(), port });
    try {
      const client = appClient(reader.baseUrl);
      expect((await client.get("/api/users")).status).toBe(200);
      const signIn = await client.post("/api/session", { userId: "ada" });
      expect(signIn.status).toBe(503);
      expect(signIn.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(signIn.body.type).toMatch(/\/database-unavailable$/);
    } finally {
      await reader.stop();
    }
  });
});
