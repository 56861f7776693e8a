import { sql, type Generated } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { createDb } from "../../db/connection";
import { leaseLock } from "./lease-lock";
import { LeaseLostError, LeaseUnavailable, withLease, type LeaseEvent } from "./with-lease";

/** A table that has nothing to do with users: a queue of jobs, each leased by the worker that runs it. */
interface JobsDatabase {
  lease_demo_jobs: {
    job_id: Generated<number>;
    name: string;
    leased_at: Date | null;
    leased_until: Date | null;
    lease_owner: string | null;
    lease_fence: Generated<string>;
    runs: Generated<number>;
  };
}

const { db } = createDb<JobsDatabase>(inject("databaseUrl"), 20);
const jobLease = leaseLock<JobsDatabase, "lease_demo_jobs">({
  table: "lease_demo_jobs",
  id: "job_id",
  lockedAt: "leased_at",
  lockedUntil: "leased_until",
  token: "lease_owner",
  fence: "lease_fence",
});
let jobId = "";

beforeAll(async () => {
  await sql`DROP TABLE IF EXISTS lease_demo_jobs`.execute(db);
  await sql`
    CREATE TABLE lease_demo_jobs (
      job_id serial PRIMARY KEY, name text NOT NULL, leased_at timestamptz, leased_until timestamptz,
      lease_owner text, lease_fence bigint NOT NULL DEFAULT 0, runs integer NOT NULL DEFAULT 0
    )`.execute(db);
});
beforeEach(async () => {
  await sql`TRUNCATE lease_demo_jobs`.execute(db);
  const row = await db
    .insertInto("lease_demo_jobs")
    .values({ name: "send the invoices" })
    .returning("job_id")
    .executeTakeFirstOrThrow();
  jobId = String(row.job_id);
});
afterAll(async () => {
  await sql`DROP TABLE IF EXISTS lease_demo_jobs`.execute(db);
  await db.destroy();
});

const runJob = () =>
  db
    .updateTable("lease_demo_jobs")
    .set((eb) => ({ runs: eb("runs", "+", 1) }))
    .where("job_id", "=", Number(jobId))
    .execute();
const runs = async () => (await db.selectFrom("lease_demo_jobs").select("runs").executeTakeFirstOrThrow()).runs;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("withLease on a second table (a job queue)", () => {
  it("runs the work exactly once among ten concurrent workers and releases the lease afterwards", async () => {
    const workers = Array.from({ length: 10 }, () =>
      withLease(jobLease, jobId, { db, ttlMs: 5_000 }, async () => {
        await runJob();
        await pause(100);
      }).then(
        () => "ran",
        (error: unknown) => (error instanceof LeaseUnavailable ? error.reason : "failed"),
      ),
    );
    const outcomes = await Promise.all(workers);
    expect(outcomes.filter((outcome) => outcome === "ran")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === "held")).toHaveLength(9);
    expect(await runs()).toBe(1);
    expect(await jobLease.inspect(db, jobId)).toMatchObject({ held: false, token: null });
  });

  it("renews the lease while the work runs longer than its TTL, gives the work a deadline inside the lease, and reports what it did", async () => {
    const events: LeaseEvent["kind"][] = [];
    await withLease(
      jobLease,
      jobId,
      { db, ttlMs: 600, renewEvery: 100, onEvent: (event) => void events.push(event.kind) },
      async (section) => {
        expect(section.deadline.remainingMs()).toBeLessThan(600);
        await pause(900);
        // Still ours after 1.5 TTLs, because it was renewed.
        expect(await section.lease.holds()).toBe(true);
        await section.checkpoint("finish");
      },
    );
    expect(events[0]).toBe("acquired");
    expect(events).toContain("renewed");
    expect(events.at(-1)).toBe("released");
  });

  it("stops the work at a checkpoint once the lease was taken over, and fires its deadline", async () => {
    const stolen = withLease(jobLease, jobId, { db, ttlMs: 2_000, renewEvery: 10_000 }, async (section) => {
      await sql`UPDATE lease_demo_jobs SET leased_until = now() - interval '1 ms'`.execute(db);
      const thief = await jobLease.acquire(db, jobId, { ttlMs: 2_000 });
      expect(thief.acquired).toBe(true);
      await section.checkpoint("write");
      await runJob();
    });
    await expect(stolen).rejects.toBeInstanceOf(LeaseLostError);
    expect(await runs()).toBe(0);
  });

  it("answers 'not-found' for a missing row", async () => {
    await expect(withLease(jobLease, "999999", { db, ttlMs: 1_000 }, async () => undefined)).rejects.toMatchObject({
      reason: "not-found",
    });
  });

  it("retries a failing release in the background; the lease is free once an attempt succeeds", async () => {
    const failures: number[] = [];
    const hooks = {
      beforeRelease(attempt: number) {
        if (attempt > 2) return;
        failures.push(attempt);
        throw new Error("injected release failure");
      },
    };
    await withLease(jobLease, jobId, { db, ttlMs: 10_000, hooks }, runJob);
    expect(failures).toEqual([1]);
    await expect.poll(async () => (await jobLease.inspect(db, jobId))?.held, { timeout: 5_000 }).toBe(false);
    expect(failures).toEqual([1, 2]);
  });

  it("keeps the lease instead of releasing it when the work says an outcome is still unknown", async () => {
    await withLease(jobLease, jobId, { db, ttlMs: 1_000 }, async (section) => {
      section.keepFor(4_000, "a call may still land");
    });
    const state = await jobLease.inspect(db, jobId);
    expect(state?.held).toBe(true);
    expect(state!.remainingMs).toBeGreaterThan(3_000);
  });
});
