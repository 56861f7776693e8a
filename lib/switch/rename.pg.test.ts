import { afterAll, beforeEach, expect, inject, it } from "vitest";
import { createDb } from "../../db/connection";
import { resetGrace } from "../../test/harness/seed-grace";
import { slowRenamingProvider } from "../../test/harness/slow-renaming-provider";
import { renameUser, userName } from "./rename";
import { findUser, identityActionLease, primaryChange } from "./users";

const { db } = createDb(inject("databaseUrl"), 2, { namedStatements: inject("namedStatements") });
afterAll(() => db.destroy());

// Grace as the seed has her, before each test.
beforeEach(() => resetGrace(db));

it("a rename that read the user before a switch saved leaves the switch's primary in place", async () => {
  const { provider, atProvider, answer } = slowRenamingProvider();
  const renaming = renameUser(db, provider, { userId: "grace", displayName: "Amazing Grace" }, 10_000, userName);
  await atProvider;
  // Meanwhile a switch saves its new primary under its lease.
  const taken = await identityActionLease.acquire(db, "grace", { ttlMs: 10_000 });
  if (!taken.acquired) throw new Error("expected to acquire");
  expect(await taken.lease.update(primaryChange("auth0|grace-email"))).toBe(true);
  await taken.lease.release();
  answer();
  expect(await renaming).toMatchObject({ displayName: "Amazing Grace", primaryIdentityId: "auth0|grace-email" });
  expect(await findUser(db, "grace")).toMatchObject({ primaryIdentityId: "auth0|grace-email" });
});
