import { sql, type Generated } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { leaseLock, type LeaseLock } from "./lease-lock.ts";
import { testDb } from "./test-support/database.ts";
import { LeaseLostError, LeaseUnavailable, withLease, type LeaseEvent } from "./with-lease.ts";

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

const { db } = testDb<JobsDatabase>(20);
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
  await sql`DROP TABLE IF EXISTS lease_demo_jobs, lease_demo_log`.execute(db);
  // Where the tests' own statements recorder writes (a statement the lease sends along with its own).
  await sql`CREATE TABLE lease_demo_log (at timestamptz NOT NULL DEFAULT clock_timestamp())`.execute(db);
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
  await sql`DROP TABLE IF EXISTS lease_demo_jobs, lease_demo_log`.execute(db);
  await db.destroy();
});

/** `jobLease` whose handles fail their first `count` releases (a database blip), noting each failed attempt. */
const failingReleases = (count: number, failures: number[]): LeaseLock<JobsDatabase, "lease_demo_jobs"> => ({
  ...jobLease,
  async acquire(db, rowId, options) {
    const taken = await jobLease.acquire(db, rowId, options);
    if (!taken.acquired) return taken;
    let attempts = 0;
    const lease = Object.assign(Object.create(taken.lease), {
      async release() {
        attempts += 1;
        if (attempts > count) return taken.lease.release();
        failures.push(attempts);
        throw new Error("injected release failure");
      },
    });
    return { ...taken, lease };
  },
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
    let refused = 0;
    const workers = Array.from({ length: 10 }, () =>
      withLease(jobLease, jobId, { db, ttlMs: 5_000 }, async () => {
        await runJob();
        // The winner holds the lease until every other worker has tried (on a busy machine their
        // connections may open later than any fixed pause).
        await expect.poll(() => refused, { timeout: 4_000 }).toBe(9);
      }).then(
        () => "ran",
        (error: unknown) => {
          if (error instanceof LeaseUnavailable) refused += 1;
          return error instanceof LeaseUnavailable ? error.reason : "failed";
        },
      ),
    );
    const outcomes = await Promise.all(workers);
    expect(outcomes.filter((outcome) => outcome === "ran")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === "held")).toHaveLength(9);
    expect(await runs()).toBe(1);
    expect(await jobLease.inspect(db, jobId)).toMatchObject({ held: false, token: null });
  });

  it(
    "renews the lease while the work runs longer than its TTL, gives the work a deadline inside the " +
      "lease, and reports what it did",
    async () => {
      const events: LeaseEvent["kind"][] = [];
      await withLease(
        jobLease,
        jobId,
        // A TTL long enough that a loaded machine's stall between two renewals does not outlast it.
        { db, ttlMs: 2_000, renewEvery: 200, onEvent: (event) => void events.push(event.kind) },
        async (section) => {
          expect(section.deadline.remainingMs()).toBeLessThan(2_000);
          await pause(3_000);
          // Still ours after 1.5 TTLs, because it was renewed.
          expect(await section.lease.holds()).toBe(true);
          await section.checkpoint("finish");
        },
      );
      expect(events[0]).toBe("acquired");
      expect(events).toContain("renewed");
      expect(events.at(-1)).toBe("released");
    },
  );

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
    await withLease(failingReleases(2, failures), jobId, { db, ttlMs: 10_000 }, runJob);
    expect(failures).toEqual([1]);
    await expect.poll(async () => (await jobLease.inspect(db, jobId))?.held, { timeout: 5_000 }).toBe(false);
    expect(failures).toEqual([1, 2]);
  });

  it("ends with the work's last write when it releases the lease: one statement, nothing sent after it", async () => {
    const events: LeaseEvent["kind"][] = [];
    const onEvent = (event: LeaseEvent) => void events.push(event.kind);
    const released = await withLease(jobLease, jobId, { db, ttlMs: 5_000, onEvent }, async ({ lease, releaseWith }) =>
      releaseWith(async () => (await lease.releasing({ name: "done" }).executeTakeFirst()).numUpdatedRows === 1n),
    );
    expect(released).toBe(true);
    expect(events).toEqual(["acquired", "released"]);
    expect(await jobLease.inspect(db, jobId)).toMatchObject({ held: false, token: null });
  });

  it("releases as usual at the end when the last write did not release", async () => {
    const events: LeaseEvent["kind"][] = [];
    const onEvent = (event: LeaseEvent) => void events.push(event.kind);
    await withLease(jobLease, jobId, { db, ttlMs: 5_000, onEvent }, async ({ releaseWith }) =>
      releaseWith(async () => false),
    );
    expect(events).toEqual(["acquired", "released"]);
    expect(await jobLease.inspect(db, jobId)).toMatchObject({ held: false });
  });

  it("keeps the lease instead of releasing it when the work says an outcome is still unknown", async () => {
    await withLease(jobLease, jobId, { db, ttlMs: 1_000 }, async (section) => {
      section.keepFor(4_000, "a call may still land");
    });
    const state = await jobLease.inspect(db, jobId);
    expect(state?.held).toBe(true);
    expect(state!.remainingMs).toBeGreaterThan(3_000);
  });

  it("claims a job by its numeric id and saves its result only while the claim holds", async () => {
    const numericId = Number(jobId);
    const result = await withLease(jobLease, numericId, { db, ttlMs: 5_000 }, async ({ lease, row }) => {
      expect(row.job_id).toBe(numericId);
      expect(row.name).toBe("send the invoices");
      return lease.update({ name: "invoices sent" });
    });
    expect(result).toBe(true);
    const { name } = await db.selectFrom("lease_demo_jobs").select("name").executeTakeFirstOrThrow();
    expect(name).toBe("invoices sent");
  });

  it("a write paused past the claim's expiry, after a second worker took over, changes nothing", async () => {
    const late = await withLease(jobLease, jobId, { db, ttlMs: 2_000, renewEvery: 10_000 }, async ({ lease }) => {
      // The pause: the claim expires and another worker takes it over and saves its own result.
      await sql`UPDATE lease_demo_jobs SET leased_until = now() - interval '1 ms'`.execute(db);
      const thief = await jobLease.acquire(db, jobId, { ttlMs: 2_000 });
      if (!thief.acquired) throw new Error("expected the second worker to take over");
      expect(await thief.lease.update({ name: "second worker's result" })).toBe(true);
      return lease.update({ name: "first worker's stale result" });
    });
    expect(late).toBe(false);
    const { name } = await db.selectFrom("lease_demo_jobs").select("name").executeTakeFirstOrThrow();
    expect(name).toBe("second worker's result");
  });

  it("renews against a slow database one renewal at a time, and reports nothing after the release", async () => {
    const events: LeaseEvent["kind"][] = [];
    // Each renewing statement takes 250 ms, five times the renewal period.
    const slowRenewal = () => sql`INSERT INTO lease_demo_log SELECT clock_timestamp() FROM pg_sleep(0.25)`;
    await withLease(
      jobLease,
      jobId,
      { db, ttlMs: 2_000, renewEvery: 50, onExtend: slowRenewal, onEvent: (event) => void events.push(event.kind) },
      async () => {
        await expect
          .poll(() => events.filter((kind) => kind === "renewed").length, { timeout: 10_000 })
          .toBeGreaterThanOrEqual(2);
        await pause(100); // a renewal is in flight when the work ends
      },
    );
    const renewals = events.filter((kind) => kind === "renewed").length;
    expect(events.at(-1)).toBe("released");
    // 50 ms apart with no wait for the answer would have overlapped about five at a time.
    expect(renewals).toBeLessThanOrEqual(4);
    await pause(400);
    expect(events.at(-1)).toBe("released");
  });

  it("a release that finds the lease taken over is reported as finding nothing, not as released", async () => {
    const events: LeaseEvent["kind"][] = [];
    await withLease(
      jobLease,
      jobId,
      { db, ttlMs: 2_000, renewEvery: 10_000, onEvent: (event) => void events.push(event.kind) },
      async () => {
        await sql`UPDATE lease_demo_jobs SET leased_until = now() - interval '1 ms'`.execute(db);
        expect((await jobLease.acquire(db, jobId, { ttlMs: 5_000 })).acquired).toBe(true);
      },
    );
    expect(events).toContain("release-found-nothing");
    expect(events).not.toContain("released");
    expect(await jobLease.inspect(db, jobId)).toMatchObject({ held: true });
  });

  it("leaves the lease as it is when keeping it for an unknown outcome fails with an error", async () => {
    const events: LeaseEvent["kind"][] = [];
    // The hold's statement fails (a database blip): the lease must not be released early.
    const failingHold = () => sql`INSERT INTO lease_demo_log SELECT 'not a time'::timestamptz`;
    await withLease(
      jobLease,
      jobId,
      { db, ttlMs: 3_000, renewEvery: 10_000, onExtend: failingHold, onEvent: (event) => void events.push(event.kind) },
      async (section) => section.keepFor(5_000, "a call may still land"),
    );
    expect(events).toContain("keep-failed");
    expect(events).not.toContain("released");
    expect(await jobLease.inspect(db, jobId)).toMatchObject({ held: true });
  });
});
