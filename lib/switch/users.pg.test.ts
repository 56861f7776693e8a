import { afterAll, expect, inject, it } from "vitest";
import { createDb } from "../../db/connection";
import { identityActionLease } from "./identity-action-lease";
import { findUser, saveUser } from "./users";

const { db } = createDb(inject("databaseUrl"), 2);
afterAll(() => db.destroy());

it("saving a user while its lease is held leaves the lease as it was", async () => {
  const acquired = await identityActionLease.acquire(db, "grace", { ttlMs: 10_000 });
  if (!acquired.acquired) throw new Error("expected to acquire");
  try {
    const user = (await findUser(db, "grace"))!;
    await saveUser(db, { ...user, displayName: "Rear Admiral Grace Hopper" });

    expect(await identityActionLease.inspect(db, "grace")).toMatchObject({
      held: true,
      expiresAt: acquired.lease.expiresAt,
      token: acquired.lease.token,
    });
    expect(await acquired.lease.release()).toBe(true);
  } finally {
    await saveUser(db, (await findUser(db, "grace"))!);
  }
});
