import { beforeAll, describe, expect, inject, it } from "vitest";
import { allowedMethods, apiRouteMethods } from "../lib/web/api-routes";
import { appClient, rawRequest, type AppClient } from "./harness/http-client";

const app = appClient(inject("appUrl"));
let ada: AppClient;

beforeAll(async () => {
  await app.reset();
  await app.configure({ provider: { latencyMs: 0 } });
  ada = await app.signedIn("ada");
});

/** Everything a bad request could have changed: users, leases, settings, provider state and its log. */
async function observableState() {
  const [adaView, grace, settings, provider] = await Promise.all([
    ada.get("/api/users/ada"),
    (await app.signedIn("grace")).get("/api/users/grace"),
    app.get("/api/lab"),
    app.provider(),
  ]);
  return { ada: adaView.body, grace: grace.body, settings: settings.body, provider };
}

type Case = {
  name: string;
  send: () => Promise<{ status: number; headers: Headers; body: any }>;
  status: number;
  field?: string;
};

const cases: Case[] = [
  { name: "no session", send: () => app.promote("ada", "github|8812"), status: 401 },
  { name: "another user's id", send: () => ada.promote("grace", "google-oauth2|77"), status: 403 },
  // As a read of that user answers: whether such a user exists is not the caller's to learn.
  { name: "an id no user has", send: () => ada.promote("nobody", "github|8812"), status: 403 },
  { name: "malformed user id", send: () => ada.promote("ADA!", "github|8812"), status: 400, field: "userId" },
  { name: "body is not JSON", send: () => ada.post("/api/users/ada/primary", "{not json"), status: 400, field: "body" },
  { name: "no body", send: () => ada.post("/api/users/ada/primary"), status: 400, field: "body" },
  {
    name: "identityId missing",
    send: () => ada.post("/api/users/ada/primary", {}),
    status: 400,
    field: "body.identityId",
  },
  {
    name: "identityId not a string",
    send: () => ada.post("/api/users/ada/primary", { identityId: 42 }),
    status: 400,
    field: "body.identityId",
  },
  { name: "identityId malformed", send: () => ada.promote("ada", "github8812"), status: 400, field: "body.identityId" },
  {
    name: "unknown field",
    send: () => ada.post("/api/users/ada/primary", { identityId: "github|8812", force: true }),
    status: 400,
    field: "body.force",
  },
  { name: "identity not linked to anyone", send: () => ada.promote("ada", "github|999999"), status: 404 },
  { name: "another user's identity", send: () => ada.promote("ada", "github|1906"), status: 404 },
  { name: "read without a session", send: () => app.get("/api/users/ada"), status: 401 },
  { name: "read another user", send: () => ada.get("/api/users/grace"), status: 403 },
  { name: "sign in as an unknown user", send: () => app.post("/api/session", { userId: "nobody" }), status: 404 },
  {
    name: "sign in with a malformed body",
    send: () => app.post("/api/session", { user: "ada" }),
    status: 400,
    field: "body.userId",
  },
  {
    name: "a forged session cookie",
    send: () => appClient(inject("appUrl"), "lab_session=ada.forged").get("/api/users/ada"),
    status: 401,
  },
  {
    name: "lab strategy unknown",
    send: () => app.put("/api/lab", { strategy: "hope" }),
    status: 400,
    field: "body.strategy",
  },
  {
    name: "lab TTL out of bounds",
    send: () => app.put("/api/lab", { leaseTtlMs: 5 }),
    status: 400,
    field: "body.leaseTtlMs",
  },
  {
    name: "lab failure rate above 1",
    send: () => app.put("/api/lab", { provider: { failureRate: 2 } }),
    status: 400,
    field: "body.provider.failureRate",
  },
  { name: "lab unknown setting", send: () => app.put("/api/lab", { turbo: true }), status: 400, field: "body.turbo" },
  // PostgreSQL's text holds no NUL: the rename had renamed the user at the provider before its save failed, a 500.
  {
    name: "a rename to a name with a NUL character",
    send: () => ada.call("PATCH", "/api/users/ada", { displayName: "A\u0000B" }),
    status: 400,
    field: "body.displayName",
  },
  // A name is shown on every page: what would ring, break its line or turn the text after it around is refused.
  ...[
    ["a control character", "Ada\u0007"],
    ["a line separator", "Ada\u2028Lovelace"],
    ["a direction override", "Ada\u202Eecalevol"],
  ].map(([what, displayName]) => ({
    name: `a rename to a name with ${what}`,
    send: () => ada.call("PATCH", "/api/users/ada", { displayName }),
    status: 400,
    field: "body.displayName",
  })),
  {
    name: "an identity id with half a surrogate pair",
    send: () => ada.post("/api/users/ada/primary", { identityId: "github|8812\ud800" }),
    status: 400,
    field: "body.identityId",
  },
  {
    name: "a query parameter given twice",
    send: () => app.get("/api/lab/events?userId=ada&userId=alan"),
    status: 400,
    field: "userId",
  },
  {
    name: "an unknown query parameter",
    send: () => app.get("/api/lab/timeline?userid=ada"),
    status: 400,
    field: "userid",
  },
  { name: "the events of an id no user has", send: () => app.get("/api/lab/events?userId=nobody"), status: 404 },
  {
    name: "a reset with a body",
    send: () => app.post("/api/lab/reset", { users: "all" }),
    status: 400,
    field: "body.users",
  },
  { name: "a sign-out with a body", send: () => ada.call("DELETE", "/api/session", "["), status: 400, field: "body" },
];

describe("every bad input gets its 4xx and changes nothing", () => {
  it.each(cases)("$name → $status", async ({ send, status, field }) => {
    const before = await observableState();
    const answer = await send();
    expect(answer.status).toBe(status);
    expect(answer.headers.get("content-type")).toBe("application/problem+json");
    expect(answer.body).toMatchObject({ status, title: expect.any(String), detail: expect.any(String) });
    expect(answer.body.type).toMatch(/^https:\/\//);
    if (field) expect(answer.body.errors.map((error: { field: string }) => error.field)).toContain(field);
    expect(await observableState()).toEqual(before);
  });
});

// Each route's path with its parameters filled in: ada, the first peer, an experiment.
const routePaths = Object.entries(apiRouteMethods).map(([route, methods]) => ({
  path: route.replace("[userId]", "ada").replace("[peer]", "1").replace("[id]", "q3-ttl-too-short"),
  methods,
}));
const everyMethod = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"];
const refusedMethods = routePaths.flatMap(({ path, methods }) =>
  everyMethod
    .filter((method) => !methods.includes(method) && !(method === "HEAD" && methods.includes("GET")))
    .map((method) => ({ method, path })),
);

describe("every API route answers a method it does not take with 405, Allow and a problem", () => {
  it.each(refusedMethods)("$method $path → 405", async ({ method, path }) => {
    const before = await observableState();
    const answer = await rawRequest(inject("appUrl"), {
      method,
      path,
      headers: { Cookie: ada.cookie!, "Content-Type": "application/json" },
      // A body a route would act on, had it taken the method.
      body: method === "GET" || method === "HEAD" ? undefined : JSON.stringify({ identityId: "github|8812" }),
    });
    expect(answer.status).toBe(405);
    expect(answer.headers.get("allow")).toBe(allowedMethods(path)!.join(", "));
    expect(answer.headers.get("content-type")).toBe("application/problem+json");
    if (method !== "HEAD")
      expect(JSON.parse(answer.body)).toMatchObject({
        type: expect.stringMatching(/\/method-not-allowed$/),
        status: 405,
        detail: expect.stringContaining(method),
      });
    expect(await observableState()).toEqual(before);
  });

  it.each(["GET", "POST", "TRACE", "OPTIONS"])("%s on an API path no route has → 404 problem", async (method) => {
    const answer = await rawRequest(inject("appUrl"), { method, path: "/api/users/ada/primary/nowhere" });
    expect(answer.status).toBe(404);
    expect(answer.headers.get("content-type")).toBe("application/problem+json");
    expect(JSON.parse(answer.body).type).toMatch(/\/not-found$/);
  });
});
