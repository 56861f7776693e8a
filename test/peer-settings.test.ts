import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startApp, type RunningApp } from "./harness/app-server";
import { appClient, type AppClient } from "./harness/http-client";

/**
 * An instance whose peers are a stand-in (a node:http server that answers GET /api/lab with whatever the test
 * says, as a peer that has not heard a change yet would) and a peer that is not there (the discard port).
 */
let answered: unknown = null;
let asked = 0;
const standIn = http.createServer((request, response) => {
  if (request.method === "GET" && request.url === "/api/lab") asked += 1;
  response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(answered));
});
let app: RunningApp;
let lab: AppClient;

beforeAll(async () => {
  await new Promise<void>((resolve) => standIn.listen(0, "127.0.0.1", resolve));
  const standInUrl = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
  app = await startApp({
    databaseUrl: inject("databaseUrl"),
    port: Number(process.env.PEER_APP_PORT),
    env: { APP_INSTANCE: "peers-1", LAB_PEER_URLS: `${standInUrl},http://127.0.0.1:9` },
  });
  lab = appClient(app.baseUrl);
  await lab.reset();
});

afterAll(async () => {
  await app?.stop();
  standIn.close();
});

describe("a settings change answers once the peers run it", () => {
  it("waits while a peer answers the settings before the change, and answers once it answers the new ones", async () => {
    const before = (await lab.get("/api/lab")).body;
    answered = before;
    asked = 0;
    let settled = false;
    const change = lab.configure({ leaseTtlMs: 7_000 }).finally(() => (settled = true));
    await expect.poll(() => asked, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    // Asked three times and still answering the old settings: the change has not answered.
    expect(settled).toBe(false);
    answered = { ...before, leaseTtlMs: 7_000 };
    expect(await change).toEqual(answered);
  });

  it("answers after its limit when a peer keeps answering other settings", async () => {
    answered = { not: "these settings" };
    const changed = await lab.configure({ leaseTtlMs: 8_000 });
    expect(changed.leaseTtlMs).toBe(8_000);
    expect((await lab.get("/api/lab")).body).toEqual(changed);
  });
});
