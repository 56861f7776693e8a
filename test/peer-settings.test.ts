import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startApp, type RunningApp } from "./harness/app-server";
import { appClient, type AppClient } from "./harness/http-client";
import { providerFor } from "./harness/provider";

/**
 * An instance whose peers are a stand-in (a node:http server that answers GET /api/lab with whatever the test
 * says, as a peer that has not heard a change yet would) and a peer that is not there (the discard port).
 */
let answered: unknown = null;
/** The `Lab-Settings-Revision` it answers, if any. */
let heardRevision: string | null = null;
let asked = 0;
const standIn = http.createServer((request, response) => {
  if (request.method === "GET" && request.url === "/api/lab") asked += 1;
  const revision = heardRevision === null ? {} : { "Lab-Settings-Revision": heardRevision };
  response.writeHead(200, { "Content-Type": "application/json", ...revision }).end(JSON.stringify(answered));
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
    heardRevision = null;
    asked = 0;
    let settled = false;
    const change = lab.configure({ leaseTtlMs: 7_000 }).finally(() => (settled = true));
    await expect.poll(() => asked, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    // Asked three times and still answering the old settings: the change has not answered.
    expect(settled).toBe(false);
    answered = { ...before, leaseTtlMs: 7_000 };
    expect(await change).toEqual(answered);
    // The instance itself names the announcement it runs under, for its own peers.
    expect((await lab.get("/api/lab")).headers.get("Lab-Settings-Revision")).toMatch(/^\d+$/);
  });

  it("answers at once when a peer says it heard this change or a newer one, whatever settings it answers", async () => {
    answered = { not: "these settings" };
    // A revision is the database's clock in microseconds: this one is far ahead of any change made now.
    heardRevision = String(BigInt(Date.now() + 3_600_000) * 1000n);
    asked = 0;
    expect((await lab.configure({ leaseTtlMs: 9_000 })).leaseTtlMs).toBe(9_000);
    expect(asked).toBe(1);
  });

  it("answers after its limit when a peer keeps answering other settings it has not heard", async () => {
    answered = { not: "these settings" };
    heardRevision = "0";
    asked = 0;
    const changed = await lab.configure({ leaseTtlMs: 8_000 });
    expect(changed.leaseTtlMs).toBe(8_000);
    expect(asked).toBeGreaterThan(1);
    expect((await lab.get("/api/lab")).body).toEqual(changed);
  });

  it("the simulated provider answers the knobs it runs, and the revision it heard them in", async () => {
    answered = null;
    heardRevision = String(BigInt(Date.now() + 3_600_000) * 1000n);
    await lab.configure({ provider: { latencyMs: 45, script: { link: ["500"] } } });
    const knobs = await fetch(`${await providerFor(inject("databaseUrl"))}/lab/knobs`).then((answer) => answer.json());
    expect(knobs.knobs).toMatchObject({ latencyMs: 45, script: { link: ["500"] } });
    expect(knobs.revision).toMatch(/^\d+$/);
  });
});
