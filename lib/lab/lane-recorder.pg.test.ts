import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeEach, expect, inject, it } from "vitest";
import { createDb } from "../../db/connection";
import { resetGrace } from "../../test/harness/seed-grace";
import { identityActionLease } from "../switch/users";
import { OperationRecorder } from "./lane-recorder";

const { db } = createDb(inject("databaseUrl"), 2, { namedStatements: inject("namedStatements") });
afterAll(() => db.destroy());
beforeEach(() => resetGrace(db));

/** Grace's lease, taken with a journal entry under its fence, as a switch's acquisition leaves it. */
async function holderOfGrace() {
  const taken = await identityActionLease.acquire(db, "grace", { ttlMs: 10_000 });
  if (!taken.acquired) throw new Error("expected to acquire");
  const operationId = randomUUID();
  await sql`INSERT INTO switch_journal (user_id, operation_id, fence, from_identity_id, to_identity_id, step)
            VALUES ('grace', ${operationId}, ${taken.lease.fence}, 'github|1906', 'auth0|grace-email', 'intent')`.execute(
    db,
  );
  return { lease: taken.lease, operationId };
}

/** A refused request's recorder, its acquisition told as the lease library tells it; its lane and its event. */
async function refusedWith(heldUntil: Date | null) {
  const recorder = new OperationRecorder(db, { userId: "grace", toIdentityId: "github|1906", strategy: "lease" });
  recorder.bind(randomUUID());
  recorder.acquiring();
  await recorder.leaseEvent({ kind: "refused", heldUntil });
  const { rows } = await sql<{ message: string }>`
    SELECT message FROM operation_events WHERE operation_id = ${recorder.operationId}`.execute(db);
  return { acquire: recorder.current().phases[0]!, events: rows.map((row) => row.message) };
}

it("names the holder of a refused request's lease, in its lane and in one event", async () => {
  const holder = await holderOfGrace();
  const { acquire, events } = await refusedWith(holder.lease.expiresAt);
  expect(acquire).toMatchObject({ name: "acquire", outcome: "refused" });
  expect(acquire.detail).toMatch(new RegExp(`^0 rows: held by operation ${holder.operationId.slice(0, 8)} until `));
  expect(events).toHaveLength(1);
  expect(events[0]).toMatch(
    new RegExp(`refused at .*: operation ${holder.operationId.slice(0, 8)} holds the lease until `),
  );
});

it("says 'another operation' once the lease no longer has the expiry the refusal reported (a renewal)", async () => {
  const holder = await holderOfGrace();
  const reported = holder.lease.expiresAt;
  await sql`UPDATE users SET identity_action_locked_until = identity_action_locked_until + interval '1 second'
             WHERE id = 'grace'`.execute(db);
  const { acquire, events } = await refusedWith(reported);
  expect(acquire.detail).toMatch(/^0 rows: held by another operation until /);
  expect(events).toEqual([expect.stringMatching(/: another operation holds the lease until .*\.$/)]);
});

it("never names an earlier holder's entry: only the one under the lease's fence", async () => {
  const earlier = await holderOfGrace();
  await earlier.lease.release();
  const now = await identityActionLease.acquire(db, "grace", { ttlMs: 10_000 });
  if (!now.acquired) throw new Error("expected to acquire");
  // The lease is held again, under a newer fence, with no journal entry of its own yet.
  const { acquire } = await refusedWith(now.lease.expiresAt);
  expect(acquire.detail).toMatch(/^0 rows: held by another operation until /);
  expect(acquire.detail).not.toContain(earlier.operationId.slice(0, 8));
});

it("says 'another operation' without an expiry when the refusal reported none", async () => {
  await holderOfGrace();
  const { acquire, events } = await refusedWith(null);
  expect(acquire.detail).toBe("0 rows: held by another operation");
  expect(events).toEqual([expect.stringMatching(/: another operation holds the lease\.$/)]);
});
