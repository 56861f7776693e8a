import { afterAll, beforeEach, expect, inject, it } from "vitest";
import { createDb } from "../../../db/connection";
import { resetGrace } from "../../../test/harness/seed-grace";
import { slowRenamingProvider } from "../../../test/harness/slow-renaming-provider";
import { renameUser } from "../../switch/rename";
import { findUser, identityActionLease, primaryChange } from "../../switch/users";
import { mappedEntity } from "./mapped-entity";

const { db } = createDb(inject("databaseUrl"), 2, { namedStatements: inject("namedStatements") });
afterAll(() => db.destroy());

// Grace as the seed has her, before each test.
beforeEach(() => resetGrace(db));

it("mapped as an ORM maps every column, the same rename writes its stale copy back: the lesson", async () => {
  const { provider, atProvider, answer } = slowRenamingProvider();
  const renaming = renameUser(db, provider, { userId: "grace", displayName: "Amazing Grace" }, 10_000, mappedEntity);
  await atProvider;
  const taken = await identityActionLease.acquire(db, "grace", { ttlMs: 10_000 });
  if (!taken.acquired) throw new Error("expected to acquire");
  expect(await taken.lease.update(primaryChange("auth0|grace-email"))).toBe(true);
  answer();
  await renaming;
  // The switch's primary is undone and its lease is wiped, while it still runs.
  expect(await findUser(db, "grace")).toMatchObject({ primaryIdentityId: "github|1906" });
  expect(await identityActionLease.inspect(db, "grace")).toMatchObject({ held: false, token: null });
});
