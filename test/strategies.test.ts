import { sql, type Kysely } from "kysely";
import { describe, expect, inject, it } from "vitest";
import { createDb } from "../db/connection";
import type { Database } from "../db/schema";
import { saveDisplayName } from "../lib/switch/users";
import { freshLabEachTest } from "./fresh-lab";
import { appClient } from "./harness/http-client";

const { app, session } = freshLabEachTest(undefined, ["ada", "grace"]);

const adaTargets = ["github|8812", "auth0|ada-email", "apple|001122.ada"];

const transactionsWaitingForALock = async (db: Kysely<Database>) =>
  (
    await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock' AND state = 'active'`.execute(db)
  ).rows[0]!.n;

/** Starts a promise and records when it settled relative to the others (an order, not a duration). */
function tracked<T>(promise: Promise<T>, order: string[], name: string): Promise<T> {
  return promise.finally(() => order.push(name));
}

describe.each(["none", "optimistic"])("`%s` cannot keep concurrent switches apart", (strategy) => {
  it("two concurrent switches leave the provider corrupted, and the audit names it", async () => {
    // Both unlinks must land before the first link: 1.5 s calls outlast a loaded machine's spread between two
    // requests sent together (behind the balancer, on two instances), where 300 ms calls left room to run apart.
    await app.configure({ strategy, provider: { latencyMs: 1_500 } });
    const targets = ["github|8812", "auth0|ada-email"];
    const answers = await Promise.all(targets.map((target) => session.ada.promote("ada", target)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 502]);
    // Both unlinked their target from the same old primary; only one could then link it.
    const loserTarget = targets[answers.findIndex((answer) => answer.status === 502)];
    const audit = await app.userAudit("ada");
    expect(audit.consistent).toBe(false);
    expect(audit.violations).toEqual([`${loserTarget} is orphaned in its own account`]);
    // The finding points at the operation that left it: the one whose link failed.
    const loser = (await app.provider()).calls.find((call: { status: number }) => call.status === 400);
    expect(audit.findings[0].operationIds).toContain(loser.operationId);
  });
});

describe("`optimistic`", () => {
  it("detects a write that landed meanwhile, but only after the provider was changed: 409 stale-write", async () => {
    await app.configure({ strategy: "optimistic", provider: { latencyMs: 400 } });
    const { db } = createDb(inject("databaseUrl"), 1);
    try {
      const switching = session.ada.promote("ada", "github|8812");
      // Once the unlink has landed at the provider, someone else writes the user.
      await expect.poll(async () => (await app.provider()).calls.length, { timeout: 10_000 }).toBe(1);
      await saveDisplayName(db, "ada", "Countess of Lovelace");

      const answer = await switching;
      expect(answer.status).toBe(409);
      expect(answer.body.type).toMatch(/\/stale-write$/);
      expect((await app.userAudit("ada")).violations).toEqual([
        "provider primary is github|8812, local primary is google-oauth2|104423",
      ]);
    } finally {
      await db.destroy();
    }
  });
});

describe.each(["transaction", "advisory"])("`%s`", (strategy) => {
  it("keeps the provider consistent but holds connections: another user's read waits while the pool is exhausted", async () => {
    await app.configure({ strategy, poolSize: 2, provider: { latencyMs: 2_500 } });
    // One instance's pool, watched and loaded on that instance (behind a balancer, the first one).
    const instance = appClient(inject("instanceUrl"));
    const [ada, grace] = [session.ada, session.grace].map((each) => appClient(inject("instanceUrl"), each.cookie));
    // Connections opened by earlier tests are closed down to the new size before the race starts.
    await expect
      .poll(async () => (await instance.get("/api/lab/pool")).body.total, { timeout: 10_000 })
      .toBeLessThanOrEqual(2);
    const order: string[] = [];
    const switches = adaTargets.map((target, index) => tracked(ada!.promote("ada", target), order, `switch ${index}`));
    // Two transactions hold both connections: one calling the provider, one waiting in the database for its
    // lock (a pool that is merely busy for a moment, with a switch's short read, would say the same numbers)...
    const { db } = createDb(inject("databaseUrl"), 1);
    try {
      await expect.poll(() => transactionsWaitingForALock(db), { timeout: 10_000 }).toBe(1);
    } finally {
      await db.destroy();
    }
    await expect
      .poll(async () => (await instance.get("/api/lab/pool")).body, { timeout: 10_000 })
      .toMatchObject({ inUse: 2, waiting: 1 });
    // ...so grace's read, which has nothing to do with ada, waits for a connection too.
    const readSent = performance.now();
    const graceRead = tracked(grace!.get("/api/users/grace"), order, "grace read");
    await expect
      .poll(async () => (await instance.get("/api/lab/pool")).body.waiting, { timeout: 10_000 })
      .toBeGreaterThan(1);
    expect(order).toEqual([]);

    expect((await graceRead).status).toBe(200);
    // It waited for a switch's transaction to end: at least one provider call's latency.
    expect(performance.now() - readSent).toBeGreaterThan(2_000);
    const answers = await Promise.all(switches);
    // The waiting switches ran one after another, each on the primary the previous one left.
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect((await app.audit()).consistent).toBe(true);
  });
});

describe("`lease`", () => {
  it("keeps the provider consistent, answers the losers at once and holds no connection while calling the provider", async () => {
    await app.configure({ strategy: "lease", poolSize: 2, provider: { latencyMs: 800 } });
    const order: string[] = [];
    const switches = adaTargets.map((target, index) =>
      tracked(session.ada.promote("ada", target), order, `switch ${index}`),
    );
    const answers = await Promise.all(switches);
    const winner = `switch ${answers.findIndex((answer) => answer.status === 200)}`;
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409, 409]);
    // The two losers were answered before the winner finished its provider calls.
    expect(order.at(-1)).toBe(winner);
    expect((await app.audit()).consistent).toBe(true);
  });

  it("lets another user's read through while a switch is calling the provider", async () => {
    await app.configure({ strategy: "lease", poolSize: 2, provider: { latencyMs: 800 } });
    // On one instance, as the test before it (behind a balancer, the first one).
    const instance = appClient(inject("instanceUrl"));
    const [ada, grace] = [session.ada, session.grace].map((each) => appClient(inject("instanceUrl"), each.cookie));
    const order: string[] = [];
    const switching = tracked(ada!.promote("ada", "github|8812"), order, "switch");
    await expect.poll(async () => (await ada!.get("/api/users/ada")).body.lease.held, { timeout: 10_000 }).toBe(true);
    const pool = (await instance.get("/api/lab/pool")).body;
    expect(pool.waiting).toBe(0);
    expect((await tracked(grace!.get("/api/users/grace"), order, "grace read")).status).toBe(200);
    expect((await switching).status).toBe(200);
    expect(order).toEqual(["grace read", "switch"]);
  });
});

describe("POST /api/lab/burst", () => {
  it("fires N concurrent switches and summarises them: under `lease`, one 200 and the rest 409", async () => {
    await app.configure({ strategy: "lease", provider: { latencyMs: 300 } });
    const answer = await session.ada.post("/api/lab/burst", { userId: "ada", count: 20, identityId: "github|8812" });
    expect(answer.status).toBe(200);
    expect(answer.body.counts).toEqual({ 200: 1, 409: 19 });
    expect(answer.body.results).toHaveLength(20);
    expect(answer.body.audit).toMatchObject({ userId: "ada", consistent: true });
    // Each result names its operation, the refused ones too: the lane the timeline draws for it.
    const ids = answer.body.results.map((result: { operationId: string }) => result.operationId);
    expect(new Set(ids).size).toBe(20);
    const lanes = (await app.get("/api/lab/timeline?userId=ada")).body.operations as { operationId: string }[];
    expect(lanes.map((lane) => lane.operationId)).toEqual(expect.arrayContaining(ids));
  });

  it("with `identityIds`, takes them in turn: under `none`, two different identities at once corrupt the provider", async () => {
    await app.configure({ strategy: "none", provider: { latencyMs: 300 } });
    const targets = ["github|8812", "auth0|ada-email"];
    const answer = await session.ada.post("/api/lab/burst", { userId: "ada", count: 2, identityIds: targets });
    expect(answer.status).toBe(200);
    expect(answer.body.results.map((result: { identityId: string }) => result.identityId)).toEqual(targets);
    expect(answer.body.counts).toEqual({ 200: 1, 502: 1 });
    expect(answer.body.audit).toMatchObject({ userId: "ada", consistent: false, settled: true });
  });

  it("refuses `identityIds` with `identityId`, and one not linked to the user, before any switch", async () => {
    const both = { userId: "ada", count: 2, identityId: "github|8812", identityIds: ["github|8812"] };
    expect((await session.ada.post("/api/lab/burst", both)).status).toBe(400);
    const grace = { userId: "ada", count: 2, identityIds: ["github|8812", "github|1906"] };
    expect((await session.ada.post("/api/lab/burst", grace)).status).toBe(404);
    expect((await session.ada.post("/api/lab/burst", { userId: "ada", count: 2, identityIds: [] })).status).toBe(400);
    expect((await app.provider()).calls).toEqual([]);
  });

  it("refuses another user's burst and a count out of bounds", async () => {
    expect((await session.ada.post("/api/lab/burst", { userId: "grace", count: 2 })).status).toBe(403);
    expect((await session.ada.post("/api/lab/burst", { userId: "ada", count: 51 })).status).toBe(400);
    expect((await app.provider()).calls).toEqual([]);
  });
});
