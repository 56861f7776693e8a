import { sql } from "kysely";
import { afterAll, beforeEach, expect, inject, it } from "vitest";
import { createDb } from "../../db/connection";
import type { IdentityProviderClient } from "../provider/client";
import { identityActionLease } from "./identity-action-lease";
import { renameUser } from "./rename";
import { findUser, primaryChange } from "./users";

const { db } = createDb(inject("databaseUrl"), 2, { namedStatements: inject("namedStatements") });
afterAll(() => db.destroy());

beforeEach(async () => {
  await sql`UPDATE users SET display_name = 'Grace Hopper', primary_identity_id = 'github|1906',
                 identity_action_locked_at = NULL, identity_action_locked_until = NULL, identity_action_lock_token = NULL
             WHERE id = 'grace'`.execute(db);
});

/** A provider whose rename answers only when told to: the rename has read the user and waits at the provider. */
function slowRenamingProvider() {
  let answer!: () => void;
  let arrived!: () => void;
  const atProvider = new Promise<void>((resolve) => (arrived = resolve));
  const provider = {
    renameAccount: () => {
      arrived();
      return new Promise<void>((resolve) => (answer = resolve));
    },
  } as unknown as IdentityProviderClient;
  return { provider, atProvider, answer: () => answer() };
}

it("a rename that read the user before a switch saved leaves the switch's primary in place", async () => {
  const { provider, atProvider, answer } = slowRenamingProvider();
  const renaming = renameUser(
    db,
    provider,
    { userId: "grace", displayName: "Amazing Grace" },
    { lockColumnMapped: false, timeoutMs: 10_000 },
  );
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

it("mapped as an ORM maps every column, the same rename writes its stale copy back: the lesson", async () => {
  const { provider, atProvider, answer } = slowRenamingProvider();
  const renaming = renameUser(
    db,
    provider,
    { userId: "grace", displayName: "Amazing Grace" },
    { lockColumnMapped: true, timeoutMs: 10_000 },
  );
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
