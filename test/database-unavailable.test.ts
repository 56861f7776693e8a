import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startApp, type RunningApp } from "./harness/app-server";
import { freezableProxy, type FreezableProxy } from "./harness/freezable-proxy";
import { appClient } from "./harness/http-client";

// One app at a time, on this file's port: each describe starts its own and stops it.
const port = Number(process.env.NO_DB_APP_PORT ?? 3217);

/** A port nothing listens on: the OS hands one out, and it is closed again. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("a database that refuses connections", () => {
  let app: RunningApp;
  beforeAll(async () => {
    app = await startApp({
      databaseUrl: `postgres://postgres:postgres@127.0.0.1:${await deadPort()}/nothing`,
      port,
      readyStatus: 503,
    });
  });
  afterAll(() => app?.stop());

  it("an app that cannot reach its database answers 503 with Retry-After, not 500", async () => {
    const client = appClient(app.baseUrl);
    const fakeSession = "lab_session=00000000-0000-4000-8000-000000000000.9999999999.x";
    const answers = [
      await client.get("/api/users"),
      await client.post("/api/session", { userId: "ada" }),
      await client.get("/api/lab"),
      await client.put("/api/lab", { poolSize: 3 }),
      await client.call("POST", "/api/lab/reset"),
      await appClient(app.baseUrl, fakeSession).get("/api/users/ada"),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.headers.get("content-type")).toBe("application/problem+json");
      expect(answer.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(answer.body.type).toMatch(/\/database-unavailable$/);
    }
    // Bad input is still told apart from an unreachable database.
    expect((await client.post("/api/session", { user: "ada" })).status).toBe(400);
  });
});

describe("a database that stops answering on a connection the app holds open", () => {
  let proxy: FreezableProxy;
  let app: RunningApp;
  beforeAll(async () => {
    proxy = await freezableProxy(inject("databaseUrl"));
    // The page's reads need no provider; 2 s for an answer instead of 65, so the test waits less.
    const env = { DATABASE_ANSWER_TIMEOUT_MS: "2000", IDP_BASE_URL: "http://127.0.0.1:9" };
    app = await startApp({ databaseUrl: proxy.url, port, env });
  });
  afterAll(async () => {
    await app?.stop();
    await proxy?.close();
  });

  it("answers 503 with Retry-After once a query goes unanswered, and serves again when the database answers", async () => {
    const client = appClient(app.baseUrl);
    expect((await client.get("/api/users")).status).toBe(200);
    proxy.freeze();
    // Its pooled connection is open, and a new one would be too: nothing but the wait tells.
    const answer = await client.get("/api/users");
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(answer.body.type).toMatch(/\/database-unavailable$/);
    proxy.thaw();
    await expect.poll(async () => (await client.get("/api/users")).status, { timeout: 15_000 }).toBe(200);
  });
});
