import type { Kysely } from "kysely";
import { describe, expect, it } from "vitest";
import { conformanceCases, type ConformanceSubject } from "./conformance.ts";
import { fakeClock, inMemoryLeaseLock } from "./in-memory.ts";
import { LeaseLostError, withLease } from "./with-lease.ts";

interface JobsDatabase {
  jobs: { id: number; status: string };
}

/** A fresh double for each case: its fake clock is the one time passes on. */
function doubleSubject(): ConformanceSubject<JobsDatabase, "jobs"> {
  const lock = inMemoryLeaseLock<JobsDatabase, "jobs">();
  let lastId = 0;
  return {
    lock,
    db: undefined as unknown as Kysely<JobsDatabase>,
    write: { status: "done" },
    async newRow() {
      lock.addRow(++lastId, { status: "new" });
      return lastId;
    },
    async elapse(_rowId, ms) {
      lock.clock.advance(ms);
    },
  };
}

describe("the in-memory double keeps the same ShedLock-derived contract", () => {
  for (const each of conformanceCases) it(each.name, () => each.run(doubleSubject()));
});

describe("the in-memory double under withLease", () => {
  const db = undefined as unknown as Kysely<JobsDatabase>;

  it("runs the work under the lease and frees it at the end; a write under it lands", async () => {
    const lock = inMemoryLeaseLock<JobsDatabase, "jobs">(fakeClock());
    lock.addRow(7, { status: "new" });
    await withLease(lock, 7, { db, ttlMs: 1_000 }, async ({ lease }) => {
      expect(await lock.acquire(db, 7, { ttlMs: 1_000 })).toMatchObject({ acquired: false, reason: "held" });
      expect(await lease.update({ status: "done" })).toBe(true);
    });
    expect(lock.row(7)).toEqual({ status: "done" });
    expect(await lock.inspect(db, 7)).toMatchObject({ held: false, fence: 1n });
  });

  it("stops the work at a checkpoint once the fake clock passed the expiry and another took the lease", async () => {
    const lock = inMemoryLeaseLock<JobsDatabase, "jobs">();
    lock.addRow(7, { status: "new" });
    const run = withLease(lock, 7, { db, ttlMs: 1_000 }, async ({ lease, checkpoint }) => {
      lock.clock.advance(1_001);
      const other = await lock.acquire(db, 7, { ttlMs: 1_000 });
      expect(other).toMatchObject({ acquired: true, lease: { fence: lease.fence + 1n } });
      await checkpoint("save");
    });
    await expect(run).rejects.toEqual(new LeaseLostError("save"));
    expect(lock.row(7)).toEqual({ status: "new" });
  });

  it("says plainly what needs SQL", async () => {
    const lock = inMemoryLeaseLock<JobsDatabase, "jobs">();
    lock.addRow(1);
    await expect(lock.acquire(db, 1, { ttlMs: 1_000, also: {} })).rejects.toThrow(/needs the real lease on PostgreSQL/);
  });
});
