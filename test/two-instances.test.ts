import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startApp, type RunningApp } from "./harness/app-server";
import { appClient, type AppClient } from "./harness/http-client";

// A second app instance on the same database, as when the app is scaled out.
const one = appClient(inject("appUrl"));
let peerApp: RunningApp;
let two: AppClient;

beforeAll(async () => {
  peerApp = await startApp({ databaseUrl: inject("databaseUrl"), port: Number(process.env.PEER_APP_PORT ?? 3216) });
  two = appClient(peerApp.baseUrl);
  await one.reset();
});

afterAll(() => peerApp?.stop());

describe("two app instances on one database", () => {
  it("a pool size set on one instance reaches the other's pool within a second", async () => {
    for (const poolSize of [7, 2, 5]) {
      await one.configure({ poolSize });
      await expect.poll(async () => (await two.get("/api/lab/pool")).body.size, { timeout: 1_000 }).toBe(poolSize);
    }
    // A reset puts the default back everywhere, too.
    await two.reset();
    await expect.poll(async () => (await one.get("/api/lab/pool")).body.size, { timeout: 1_000 }).toBe(4);
    await expect.poll(async () => (await two.get("/api/lab/pool")).body.size, { timeout: 1_000 }).toBe(4);
  });

  it("two concurrent resets, one per instance, both succeed: 20 rounds", async () => {
    for (let round = 0; round < 20; round++) {
      const answers = await Promise.all([one.call("POST", "/api/lab/reset"), two.call("POST", "/api/lab/reset")]);
      expect(answers.map((answer) => answer.status)).toEqual([204, 204]);
    }
    expect((await one.audit()).consistent).toBe(true);
    expect((await one.provider()).calls).toEqual([]);
  });
});
