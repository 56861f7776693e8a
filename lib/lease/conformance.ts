/**
 * What any `LeaseLock` must do, as cases any test runner can run (they throw `node:assert` errors): derived
 * from ShedLock's provider contract (`AbstractLockProviderIntegrationTest`,
 * `AbstractExtensibleLockProviderIntegrationTest`), each named after the ShedLock test it follows, plus the
 * lease's own promises (fences, owner-checked writes, the hold cap, who holds what). The real lease runs them
 * on PostgreSQL, the in-memory double on its fake clock, and an installed package on yours:
 *
 * @example
 * for (const each of conformanceCases) it(each.name, () => each.run(subject));
 */
import assert from "node:assert/strict";
import type { Kysely, UpdateObject } from "kysely";
import type { Acquisition, LeaseHandle, LeaseLock, RowId } from "./lease-lock.ts";

/** What the cases run on: a lock, its database, fresh rows, and time passing for a row's lease. */
export interface ConformanceSubject<DB = unknown, TB extends keyof DB & string = keyof DB & string> {
  lock: LeaseLock<DB, TB>;
  /** Passed to every call (the in-memory double ignores it). */
  db: Kysely<DB>;
  /** A new row, its lease never taken, with an integer id greater than every earlier row's. */
  newRow(): Promise<number>;
  /** A write of the work's own columns that a holder may make (`lease.update`). */
  write: UpdateObject<DB, TB>;
  /**
   * Lets `ms` pass for this row's lease: on a real database, its `locked_at` and `locked_until` move that much
   * earlier; on a fake clock, the clock moves on.
   */
  elapse(rowId: RowId, ms: number): Promise<void>;
}

export interface ConformanceCase {
  name: string;
  run<DB, TB extends keyof DB & string>(subject: ConformanceSubject<DB, TB>): Promise<void>;
}

const TTL_MS = 10_000;

function taken<DB, TB extends keyof DB & string>(acquisition: Acquisition<DB, TB>): LeaseHandle<DB, TB> {
  if (!acquisition.acquired) assert.fail(`expected to acquire, got ${JSON.stringify(acquisition)}`);
  return acquisition.lease;
}

const acquire = <DB, TB extends keyof DB & string>(
  { lock, db }: ConformanceSubject<DB, TB>,
  rowId: RowId,
  ttlMs = TTL_MS,
  maxHoldMs?: number,
) => lock.acquire(db, rowId, { ttlMs, maxHoldMs });

export const conformanceCases: ConformanceCase[] = [
  {
    name: "shouldCreateLock: a free row's lease is taken, and the database says who holds it until when",
    async run(subject) {
      const rowId = await subject.newRow();
      const lease = taken(await acquire(subject, rowId));
      const state = await subject.lock.inspect(subject.db, rowId);
      assert.equal(state?.held, true);
      assert.equal(state.token, lease.token);
      assert.equal(state.fence, lease.fence);
      assert.equal(state.expiresAt?.getTime(), lease.expiresAt.getTime());
      assert.ok(lease.remainingMs > 0 && lease.remainingMs <= TTL_MS, `remaining ${lease.remainingMs} ms`);
    },
  },
  {
    name: "shouldNotReturnSecondLock: while it is held, another acquirer is refused at once with the holder's expiry",
    async run(subject) {
      const rowId = await subject.newRow();
      const first = taken(await acquire(subject, rowId));
      const second = await acquire(subject, rowId);
      assert.ok(!second.acquired && second.reason === "held", "refused: held");
      assert.equal(second.heldUntil?.getTime(), first.expiresAt.getTime());
      assert.ok(second.remainingMs > 0);
    },
  },
  {
    name: "shouldCreateLockIfReleased: once released, the next acquirer takes it with the next fence",
    async run(subject) {
      const rowId = await subject.newRow();
      const first = taken(await acquire(subject, rowId));
      assert.equal(await first.release(), true);
      assert.equal((await subject.lock.inspect(subject.db, rowId))?.held, false);
      const second = taken(await acquire(subject, rowId));
      assert.equal(second.fence, first.fence + 1n);
      assert.notEqual(second.token, first.token);
    },
  },
  {
    name: "shouldLockTwiceInARow: acquire and release, twice over, leaves the row free and the fence grown by two",
    async run(subject) {
      const rowId = await subject.newRow();
      const before = (await subject.lock.inspect(subject.db, rowId))!.fence;
      for (let round = 0; round < 2; round++) assert.equal(await taken(await acquire(subject, rowId)).release(), true);
      const state = await subject.lock.inspect(subject.db, rowId);
      assert.deepEqual(
        { held: state?.held, token: state?.token, expiresAt: state?.expiresAt, fence: state?.fence },
        { held: false, token: null, expiresAt: null, fence: before + 2n },
      );
    },
  },
  {
    name:
      "shouldTimeout: an expired lease is taken over; the old holder's release, renewal, hold check and write " +
      "then change nothing",
    async run(subject) {
      const rowId = await subject.newRow();
      const old = taken(await acquire(subject, rowId, 1_000));
      await subject.elapse(rowId, 1_001);
      assert.equal((await subject.lock.inspect(subject.db, rowId))?.held, false);
      const next = taken(await acquire(subject, rowId, 1_000));
      assert.equal(next.fence, old.fence + 1n);
      assert.equal(await old.holds(), false);
      assert.equal(await old.renew(), false);
      assert.equal(await old.release(), false);
      assert.equal(await old.update(subject.write), false);
      assert.equal(await next.update(subject.write), true);
      assert.equal((await subject.lock.inspect(subject.db, rowId))?.token, next.token);
      assert.equal(await next.holds(), true);
    },
  },
  {
    name: "shouldBeAbleToExtendLock: the holder's renewal moves the expiry later",
    async run(subject) {
      const rowId = await subject.newRow();
      const lease = taken(await acquire(subject, rowId, 1_000));
      await subject.elapse(rowId, 500);
      const before = (await subject.lock.inspect(subject.db, rowId))!.expiresAt!.getTime();
      assert.equal(await lease.renew(), true);
      assert.ok(lease.expiresAt.getTime() > before, "the renewal moved the expiry later");
      assert.equal((await subject.lock.inspect(subject.db, rowId))?.expiresAt?.getTime(), lease.expiresAt.getTime());
    },
  },
  {
    name: "shouldNotBeAbleToExtendExpiredLock: a lease past its expiry is not renewed",
    async run(subject) {
      const rowId = await subject.newRow();
      const lease = taken(await acquire(subject, rowId, 1_000));
      await subject.elapse(rowId, 1_001);
      assert.equal(await lease.renew(), false);
      assert.equal((await subject.lock.inspect(subject.db, rowId))?.held, false);
    },
  },
  {
    name: "shouldNotExtendReleasedLock: a released lease is neither renewed nor held",
    async run(subject) {
      const rowId = await subject.newRow();
      const lease = taken(await acquire(subject, rowId));
      assert.equal(await lease.release(), true);
      assert.equal(await lease.renew(), false);
      assert.equal(await lease.holds(), false);
      assert.equal((await subject.lock.inspect(subject.db, rowId))?.held, false);
    },
  },
  {
    name: "the hold cap: renewals never hold the lease past its acquisition plus maxHoldMs",
    async run(subject) {
      const rowId = await subject.newRow();
      const lease = taken(await acquire(subject, rowId, 1_000, 1_500));
      await subject.elapse(rowId, 900);
      assert.equal(await lease.renew(), true);
      const state = (await subject.lock.inspect(subject.db, rowId))!;
      const heldFor = state.expiresAt!.getTime() - state.lockedAt!.getTime();
      assert.ok(heldFor <= 1_500, `held for ${heldFor} ms`);
      assert.ok(heldFor > 1_000, `renewed to ${heldFor} ms after acquisition`);
    },
  },
  {
    name: "fuzz: of ten acquirers at once exactly one wins, and every loser learns the winner's expiry",
    async run(subject) {
      const rowId = await subject.newRow();
      const results = await Promise.all(Array.from({ length: 10 }, () => acquire(subject, rowId)));
      const winners = results.filter((result) => result.acquired);
      assert.equal(winners.length, 1);
      const winner = taken(winners[0]!);
      for (const loser of results.filter((result) => !result.acquired))
        assert.ok(loser.reason === "held" && loser.heldUntil?.getTime() === winner.expiresAt.getTime());
    },
  },
  {
    name: "a missing row is not found, and nothing is taken",
    async run(subject) {
      // Past every row made yet, and far ahead of the next ones.
      const missing = (await subject.newRow()) + 1_000_000;
      assert.deepEqual(await acquire(subject, missing), { acquired: false, reason: "not-found" });
      assert.equal(await subject.lock.inspect(subject.db, missing), null);
    },
  },
  {
    name: "who holds what: a page of the rows held now, by id, with their expiry and fence, paged after the last id",
    async run(subject) {
      const ids = [await subject.newRow(), await subject.newRow(), await subject.newRow(), await subject.newRow()];
      const leases = [];
      for (const rowId of ids) leases.push(taken(await acquire(subject, rowId)));
      await leases[1]!.release();
      const holding = [leases[0]!, leases[2]!, leases[3]!];
      const first = await subject.lock.holders(subject.db, { limit: 2, after: ids[0]! - 1 });
      assert.deepEqual(
        first.holders.map(({ rowId, token, fence, expiresAt }) => ({ rowId: String(rowId), token, fence, expiresAt })),
        holding
          .slice(0, 2)
          .map(({ rowId, token, fence, expiresAt }) => ({ rowId: String(rowId), token, fence, expiresAt })),
      );
      assert.equal(String(first.next), String(ids[2]));
      const second = await subject.lock.holders(subject.db, { limit: 2, after: first.next });
      assert.deepEqual(
        second.holders.map((holder) => holder.token),
        [holding[2]!.token],
      );
      assert.equal(second.next, null);
    },
  },
];
