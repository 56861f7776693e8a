import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startRedis, type RunningRedis } from "../scripts/parts/redis";
import { startApp, type RunningApp } from "./harness/app-server";
import { appClient, type AppClient } from "./harness/http-client";

// The system's redis-server, started (and supervised) as `npm run dev -- --redis` does, and an app instance
// told about it, beside the global set-up's instance, which runs without Redis.
const withoutRedis = appClient(inject("appUrl"));
let redis: RunningRedis;
let redisApp: RunningApp;
let withRedis: AppClient;
let inspector: Redis;

beforeAll(async () => {
  redis = await startRedis(Number(process.env.REDIS_PORT ?? 6380));
  inspector = new Redis(redis.url);
  // The restart test stops the server under it: it reconnects, and says so only here.
  inspector.on("error", () => undefined);
  redisApp = await startApp({
    databaseUrl: inject("databaseUrl"),
    port: Number(process.env.REDIS_APP_PORT ?? 3231),
    env: { REDIS_URL: redis.url, LAB_INSTANCE: "redis" },
  });
  withRedis = appClient(redisApp.baseUrl);
  await withRedis.reset();
});

afterAll(async () => {
  await withRedis?.reset();
  inspector?.disconnect();
  await redisApp?.stop();
  await redis?.stop();
});

const listed = async (client: AppClient, id: string) =>
  (await client.get("/api/lab/experiments")).body.experiments.find(
    (experiment: { id: string }) => experiment.id === id,
  );

describe("the redis strategy on a real redis-server", () => {
  it("two clicks at once: one takes the key (SET NX PX), the other is refused; the release deletes it", async () => {
    await withRedis.configure({ strategy: "redis" });
    const ada = await withRedis.signedIn("ada");
    const clicks = await Promise.all([ada.promote("ada", "github|8812"), ada.promote("ada", "github|8812")]);
    expect(clicks.map((click) => click.status).sort()).toEqual([200, 409]);
    const refused = clicks.find((click) => click.status === 409)!;
    expect(refused.body.type).toMatch(/\/operation-in-progress$/);
    expect(refused.headers.get("Retry-After")).toMatch(/^\d+$/);
    expect(await inspector.exists("lab:switch-lock:ada")).toBe(0);
    expect((await withRedis.audit()).consistent).toBe(true);
  });

  it("an instance without Redis answers 503 under the redis strategy and changes nothing", async () => {
    await withRedis.configure({ strategy: "redis" });
    const ada = await withoutRedis.signedIn("ada");
    const before = (await ada.get("/api/users/ada")).body.primaryIdentityId;
    const answer = await ada.promote("ada", "auth0|ada-email");
    expect(answer.status).toBe(503);
    expect(answer.body.type).toMatch(/\/redis-unavailable$/);
    expect((await ada.get("/api/users/ada")).body.primaryIdentityId).toBe(before);
    await withRedis.reset();
  });

  it("redis-restart-loses-lock: unavailable without Redis, and shown on a real restart", async () => {
    // Not started with one: nothing to await (the Learn page does not read the list again for it).
    expect(await listed(withoutRedis, "redis-restart-loses-lock")).toMatchObject({
      available: false,
      awaitingParts: false,
      needs: ["redis-server"],
    });
    expect(await listed(withRedis, "redis-restart-loses-lock")).toMatchObject({
      available: true,
      awaitingParts: false,
    });
    const run = await withRedis.post("/api/lab/experiments/redis-restart-loses-lock/run");
    expect(run.status).toBe(200);
    expect(run.body.verdict, run.body.explanation).toBe("as-expected");
    expect(run.body.observed.keyHeldBeforeRestart).toBe(true);
    expect(run.body.observed.keyHeldAfterRestart).toBe(false);
    expect(run.body.observed.secondCalledProviderWhileFirstDid).toBe(true);
  });

  it("q5 measures advisory, Redis and the lease in one run; without Redis it says Redis was not measured", async () => {
    const run = await withRedis.post("/api/lab/experiments/q5-advisory-or-lease/run");
    expect(run.status).toBe(200);
    expect(run.body.verdict, run.body.explanation).toBe("as-expected");
    // Redis holds no connection of the app's during the calls: none in use, pinned, in a transaction or locked.
    expect(run.body.observed.redis.drop.connectionsHeldDuringCalls).toEqual({
      poolInUse: 0,
      pinnedConnections: 0,
      idleInTransaction: 0,
      advisoryLocks: 0,
    });
    expect(run.body.observed.redis.paused.lateWriteNotFenced).toBe(true);
    expect(run.body.observed.comparison.map((each: { strategy: string }) => each.strategy)).toEqual([
      "advisory",
      "session-advisory",
      "lease",
      "redis",
    ]);

    const without = await withoutRedis.post("/api/lab/experiments/q5-advisory-or-lease/run");
    expect(without.status).toBe(200);
    expect(without.body.verdict, without.body.explanation).toBe("as-expected");
    expect(without.body.observed.redis).toEqual({ measured: false, needs: ["redis-server"] });
    expect(without.body.explanation).toContain("Redis was not measured");
  });
});
