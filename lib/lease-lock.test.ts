import { sql, type Kysely } from "kysely";
import { afterAll, beforeEach, describe, expect, inject, it } from "vitest";
import { createDb } from "../db/connection";
import { identityActionLease, leaseLock } from "./lease-lock";

const CONTENDERS = 50;
const { db, pool } = createDb(inject("databaseUrl"), CONTENDERS + 5);

afterAll(() => db.destroy());

async function clearLease(userId: string): Promise<void> {
  await sql`UPDATE users SET identity_action_locked_at = NULL, identity_action_lock_token = NULL WHERE id = ${userId}`.execute(db);
}

/** Moves the lease's start into the past, as if its holder had stalled or died that long ago. */
async function ageLease(userId: string, ageMs: number): Promise<void> {
  await sql`UPDATE users SET identity_action_locked_at = now() - ${ageMs} * interval '1 millisecond' WHERE id = ${userId}`.execute(db);
}

describe("lease lock on real PostgreSQL", () => {
  beforeEach(() => clearLease("ada"));

  it("lets exactly one of 50 truly concurrent acquirers on separate connections win", async () => {
    const results = await Promise.all(Array.from({ length: CONTENDERS }, () => identityActionLease.acquire(db, "ada", 10_000)));
    // The pool opened a connection per contender: the 50 UPDATEs really raced inside PostgreSQL.
    expect(pool.totalCount).toBeGreaterThanOrEqual(CONTENDERS);
    const winners = results.filter((result) => result.acquired);
    expect(winners).toHaveLength(1);
    const winner = winners[0]!;
    if (!winner.acquired) throw new Error("unreachable");
    for (const loser of results.filter((result) => !result.acquired)) {
      expect(loser).toMatchObject({ acquired: false, reason: "held", expiresAt: winner.lease.expiresAt });
    }
  });

  it("computes the expiry on the database clock", async () => {
    const result = await identityActionLease.acquire(db, "ada", 10_000);
    if (!result.acquired) throw new Error("expected to acquire");
    const { rows } = await sql<{ expected: Date }>`SELECT identity_action_locked_at + interval '10 seconds' AS expected FROM users WHERE id = 'ada'`.execute(db);
    expect(result.lease.expiresAt).toEqual(rows[0]!.expected);
    expect(result.lease.remainingMs).toBeGreaterThan(9_000);
    expect(result.lease.remainingMs).toBeLessThanOrEqual(10_000);
  });

  it("takes over a lease older than the TTL; the old owner's late release then reports not held and clears nothing", async () => {
    const first = await identityActionLease.acquire(db, "ada", 1_000);
    if (!first.acquired) throw new Error("expected to acquire");
    expect((await identityActionLease.acquire(db, "ada", 1_000)).acquired).toBe(false);

    await ageLease("ada", 1_500);
    const second = await identityActionLease.acquire(db, "ada", 1_000);
    if (!second.acquired) throw new Error("expected to take over the expired lease");
    expect(second.lease.fence).toBe(first.lease.fence + 1n);

    expect(await identityActionLease.release(db, "ada", first.lease.token)).toBe(false);
    expect(await identityActionLease.inspect(db, "ada", 1_000)).toMatchObject({ held: true });
    expect(await identityActionLease.release(db, "ada", second.lease.token)).toBe(true);
    expect(await identityActionLease.inspect(db, "ada", 1_000)).toEqual({ held: false, expiresAt: null, remainingMs: 0 });
  });

  it("grows the fence by one at every acquisition", async () => {
    const fences: bigint[] = [];
    for (let round = 0; round < 3; round++) {
      const result = await identityActionLease.acquire(db, "ada", 10_000);
      if (!result.acquired) throw new Error("expected to acquire");
      fences.push(result.lease.fence);
      await identityActionLease.release(db, "ada", result.lease.token);
    }
    expect(fences[1]).toBe(fences[0]! + 1n);
    expect(fences[2]).toBe(fences[1]! + 1n);
  });

  it("renews only its own unexpired lease", async () => {
    const result = await identityActionLease.acquire(db, "ada", 1_000);
    if (!result.acquired) throw new Error("expected to acquire");
    expect(await identityActionLease.renew(db, "ada", crypto.randomUUID(), 1_000)).toBeNull();
    expect(await identityActionLease.renew(db, "ada", result.lease.token, 1_000)).toBeInstanceOf(Date);
    await ageLease("ada", 1_500);
    expect(await identityActionLease.renew(db, "ada", result.lease.token, 1_000)).toBeNull();
  });

  it("reports a missing row as not found", async () => {
    expect(await identityActionLease.acquire(db, "nobody", 1_000)).toEqual({ acquired: false, reason: "not-found" });
  });

  it("works on any table with its own column names", async () => {
    await sql`CREATE TABLE IF NOT EXISTS lease_demo_jobs (job_id int PRIMARY KEY, leased_at timestamptz, lease_owner uuid, lease_fence bigint NOT NULL DEFAULT 0)`.execute(db);
    await sql`INSERT INTO lease_demo_jobs (job_id) VALUES (1) ON CONFLICT DO NOTHING`.execute(db);
    const jobLease = leaseLock({ table: "lease_demo_jobs", id: "job_id", lockedAt: "leased_at", token: "lease_owner", fence: "lease_fence" });
    const results = await Promise.all(Array.from({ length: 10 }, () => jobLease.acquire(db as Kysely<unknown>, "1", 5_000)));
    expect(results.filter((result) => result.acquired)).toHaveLength(1);
  });
});
