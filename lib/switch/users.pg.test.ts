import { afterAll, beforeEach, expect, inject, it } from "vitest";
import { sql } from "kysely";
import { createDb } from "../../db/connection";
import { findUser, identityActionLease, primaryChange, saveDisplayName } from "./users";

const { db } = createDb(inject("databaseUrl"), 2, { namedStatements: inject("namedStatements") });
afterAll(() => db.destroy());

const seeded = { displayName: "Grace Hopper", primaryIdentityId: "github|1906" };
beforeEach(async () => {
  await sql`UPDATE users SET display_name = ${seeded.displayName}, primary_identity_id = ${seeded.primaryIdentityId},
                 identity_action_locked_at = NULL, identity_action_locked_until = NULL, identity_action_lock_token = NULL
             WHERE id = 'grace'`.execute(db);
});

const acquireGrace = async (ttlMs = 10_000) => {
  const acquired = await identityActionLease.acquire(db, "grace", { ttlMs });
  if (!acquired.acquired) throw new Error("expected to acquire");
  return acquired;
};

it("saving a user's name while its lease is held leaves the lease as it was", async () => {
  const { lease } = await acquireGrace();
  await saveDisplayName(db, "grace", "Rear Admiral Grace Hopper");
  expect(await identityActionLease.inspect(db, "grace")).toMatchObject({
    held: true,
    expiresAt: lease.expiresAt,
    token: lease.token,
  });
  expect(await lease.release()).toBe(true);
});

it("hands the switch the user row typed, as a query of it would read it", async () => {
  const { row, lease } = await acquireGrace();
  expect(row.display_name).toBe(seeded.displayName);
  expect(row.identity_action_locked_until).toBeInstanceOf(Date);
  expect(row.identity_action_fence).toBe(String(lease.fence));
  await lease.release();
});

it("a switch's save writes only the primary: a rename that landed meanwhile keeps its name", async () => {
  const { lease } = await acquireGrace();
  await saveDisplayName(db, "grace", "Amazing Grace");
  expect(await lease.update(primaryChange("auth0|grace-email"))).toBe(true);
  expect(await findUser(db, "grace")).toMatchObject({
    displayName: "Amazing Grace",
    primaryIdentityId: "auth0|grace-email",
  });
  await lease.release();
});

it("a save under a lease that expired, or was taken over, changes nothing", async () => {
  const first = await acquireGrace(1_000);
  await sql`UPDATE users SET identity_action_locked_until = now() - interval '1 ms' WHERE id = 'grace'`.execute(db);
  // Expired but not yet taken: the token still matches, the lease does not hold.
  expect(await first.lease.update(primaryChange("auth0|grace-email"))).toBe(false);
  const second = await acquireGrace();
  expect(await first.lease.update(primaryChange("auth0|grace-email"))).toBe(false);
  expect((await findUser(db, "grace"))?.primaryIdentityId).toBe(seeded.primaryIdentityId);
  expect(await second.lease.update(primaryChange("auth0|grace-email"))).toBe(true);
  await second.lease.release();
});
