import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startApp, type RunningApp } from "./harness/app-server";
import { appClient } from "./harness/http-client";

// Two instances that know each other, as `npm start -- --instances 2` starts them; the first also knows a
// peer that is not there (nothing listens on the discard port).
const firstPort = Number(process.env.RELAY_APP_PORT ?? 3220);
const urlOf = (port: number) => `http://127.0.0.1:${port}`;
const deadPeer = "http://127.0.0.1:9";
let first: RunningApp;
let second: RunningApp;

beforeAll(async () => {
  const databaseUrl = inject("databaseUrl");
  [first, second] = await Promise.all([
    startApp({
      databaseUrl,
      port: firstPort,
      env: { APP_INSTANCE: "relay-1", LAB_PEER_URLS: `${urlOf(firstPort + 1)},${deadPeer}` },
    }),
    startApp({
      databaseUrl,
      port: firstPort + 1,
      env: { APP_INSTANCE: "relay-2", LAB_PEER_URLS: urlOf(firstPort) },
    }),
  ]);
  await appClient(first.baseUrl).reset();
});

afterAll(() => Promise.all([first?.stop(), second?.stop()]));

describe("the relay: a switch sent to another instance through this one", () => {
  it("lists this instance and its peers", async () => {
    const { status, body } = await appClient(first.baseUrl).get("/api/lab/instances");
    expect(status).toBe(200);
    expect(body).toEqual({
      instance: "relay-1",
      balancer: null,
      // One database, not a replicated shape: no nodes to name.
      databases: [],
      databasesUnreachable: [],
      peers: [
        { peer: 1, url: urlOf(firstPort + 1) },
        { peer: 2, url: deadPeer },
      ],
    });
  });

  it("runs the switch on the peer, with the session, and answers the peer's answer", async () => {
    const ada = await appClient(first.baseUrl).signedIn("ada");
    const answer = await ada.post("/api/lab/relay/1/users/ada/primary", { identityId: "github|8812" });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ primaryIdentityId: "github|8812", changed: true });
    const { operations } = (await ada.get("/api/lab/timeline?userId=ada")).body;
    const lane = operations.find((each: { operationId: string }) => each.operationId === answer.body.operationId);
    expect(lane).toMatchObject({ instance: "relay-2", status: 200 });
    expect((await ada.audit()).consistent).toBe(true);
  });

  it("passes the peer's refusals on as they are: no session is a 401 problem from the peer", async () => {
    const answer = await appClient(first.baseUrl).post("/api/lab/relay/1/users/ada/primary", {
      identityId: "github|8812",
    });
    expect(answer.status).toBe(401);
    expect(answer.headers.get("content-type")).toBe("application/problem+json");
  });

  it("answers bad input with 4xx problems and a peer that does not answer with 502", async () => {
    const ada = await appClient(first.baseUrl).signedIn("ada");
    const cases: [string, unknown, number, string][] = [
      ["/api/lab/relay/3/users/ada/primary", { identityId: "github|8812" }, 404, "peer-not-found"],
      ["/api/lab/relay/first/users/ada/primary", { identityId: "github|8812" }, 400, "validation"],
      ["/api/lab/relay/0/users/ada/primary", { identityId: "github|8812" }, 400, "validation"],
      ["/api/lab/relay/1/users/ADA/primary", { identityId: "github|8812" }, 400, "validation"],
      ["/api/lab/relay/1/users/ada/primary", { identityId: "github|8812", extra: 1 }, 400, "validation"],
      ["/api/lab/relay/1/users/ada/primary", "not json", 400, "validation"],
      ["/api/lab/relay/2/users/ada/primary", { identityId: "github|8812" }, 502, "peer-unreachable"],
    ];
    for (const [path, body, status, type] of cases) {
      const answer = await ada.post(path, body);
      expect({ path, body, status: answer.status }).toEqual({ path, body, status });
      expect(answer.headers.get("content-type")).toBe("application/problem+json");
      expect(answer.body.type).toMatch(new RegExp(`/${type}$`));
    }
  });
});
