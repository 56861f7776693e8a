import { describe, expect, it } from "vitest";
import { freshLabEachTest } from "./fresh-lab";

// Rename: the other writer of the user row. What `lockColumnMapped` does to a running switch's lease is
// measured by the q4-lock-column-mapped experiment (test/experiments.test.ts); a rename that read the user
// before a switch saved, by lib/switch/rename.pg.test.ts.
const { app, session } = freshLabEachTest({ provider: { latencyMs: 300 } });

describe("PATCH /api/users/{userId}", () => {
  it("renames the user at the provider and locally: 200 UserView", async () => {
    const answer = await session.ada.call("PATCH", "/api/users/ada", { displayName: "Augusta Ada King" });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id: "ada", displayName: "Augusta Ada King", lease: { held: false } });
    const patches = (await app.calls()).filter((call) => call.method === "PATCH");
    expect(patches.map((call) => [call.path, call.status])).toEqual([["/api/v2/users/google-oauth2|104423", 200]]);
  });

  it("bad input is a 400 that changes nothing; another user's id a 403; no session a 401", async () => {
    for (const body of [{}, { displayName: "" }, { displayName: "x".repeat(81) }, { displayName: "A", extra: 1 }]) {
      const answer = await session.ada.call("PATCH", "/api/users/ada", body);
      expect(answer.status).toBe(400);
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
    }
    expect((await session.ada.call("PATCH", "/api/users/grace", { displayName: "G" })).status).toBe(403);
    expect((await app.call("PATCH", "/api/users/ada", { displayName: "G" })).status).toBe(401);
    expect((await session.ada.get("/api/users/ada")).body.displayName).toBe("Ada Lovelace");
    expect(await app.calls()).toEqual([]);
  });

  it("a provider that does not answer in time: 504, its deadline the rename's own (it takes no lease)", async () => {
    await app.configure({ leaseTtlMs: 500, provider: { timeoutRate: 1 } });
    const answer = await session.ada.call("PATCH", "/api/users/ada", { displayName: "Augusta Ada King" });
    expect(answer.status).toBe(504);
    expect(answer.body).toMatchObject({
      step: "rename",
      title: "The rename's deadline ran out",
      detail: "The rename call did not answer before the rename's deadline.",
    });
  });

  it("a rename during a slow switch keeps its name: the switch saves only the primary", async () => {
    await app.configure({
      provider: { latencyMs: 100, endpoints: { unlink: { latencyMs: 800 }, link: { latencyMs: 800 } } },
    });
    const switching = session.ada.promote("ada", "github|8812");
    await expect.poll(async () => (await session.ada.get("/api/users/ada")).body.lease.held).toBe(true);
    const renamed = await session.ada.call("PATCH", "/api/users/ada", { displayName: "Augusta Ada King" });
    expect(renamed.status).toBe(200);
    expect((await switching).status).toBe(200);
    expect((await session.ada.get("/api/users/ada")).body).toMatchObject({
      displayName: "Augusta Ada King",
      primaryIdentityId: "github|8812",
    });
  });
});
