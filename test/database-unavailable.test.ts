import { createServer } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startApp, type RunningApp } from "./harness/app-server";
import { appClient } from "./harness/http-client";

let app: RunningApp;

/** A port nothing listens on: the OS hands one out, and it is closed again. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  app = await startApp({
    databaseUrl: `postgres://postgres:postgres@127.0.0.1:${await deadPort()}/nothing`,
    port: Number(process.env.NO_DB_APP_PORT ?? 3217),
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
