/**
 * The users and their identities: the repository's reads and writes, typed rows in, domain objects out; and the
 * lease on a user's row that guards its identity actions.
 */
import { sql, type Expression, type Kysely, type Selectable, type UpdateObject } from "kysely";
import { leaseLock } from "@lease-lock-lab/lease";
import type { Database, UsersTable } from "../../db/schema";

/**
 * The lease that guards a user's identity actions (promote to primary): four columns on `users`, and a fifth for
 * the generation of the primary that issued it. The lease guard takes it; the journal's statements check it.
 */
export const identityActionLease = leaseLock<Database, "users">(
  {
    table: "users",
    id: "id",
    lockedAt: "identity_action_locked_at",
    lockedUntil: "identity_action_locked_until",
    token: "identity_action_lock_token",
    fence: "identity_action_fence",
    generation: "identity_action_generation",
  },
  // Sent as named prepared statements by the app's pool (db/prepared-statements.ts).
  { preparedName: "users_lease" },
);

/** A user as the rest of the code reads and writes it: the lease columns are not part of it. */
export interface User {
  id: string;
  displayName: string;
  primaryIdentityId: string;
}

export interface Identity {
  id: string;
  provider: string;
  providerUserId: string;
  label: string;
}

export async function listUsers(db: Kysely<Database>): Promise<Pick<User, "id" | "displayName">[]> {
  const rows = await db.selectFrom("users").select(["id", "display_name"]).orderBy("display_name").execute();
  return rows.map((row) => ({ id: row.id, displayName: row.display_name }));
}

/** The user's own columns, as a row of `users` has them (read by a query, or by the lease's acquire). */
export type UserColumns = Pick<Selectable<UsersTable>, "id" | "display_name" | "primary_identity_id">;

export const userFromRow = (row: UserColumns): User => ({
  id: row.id,
  displayName: row.display_name,
  primaryIdentityId: row.primary_identity_id,
});

export async function findUser(db: Kysely<Database>, userId: string): Promise<User | null> {
  const row = await db
    .selectFrom("users")
    .select(["id", "display_name", "primary_identity_id"])
    .where("id", "=", userId)
    .executeTakeFirst();
  return row ? userFromRow(row) : null;
}

/**
 * The change a switch makes to the user row: the new primary and the version, nothing else, so it never
 * writes back a copy of the other columns (a rename that landed meanwhile keeps its name). The lease's
 * holder sends it through `lease.update`, which adds the owner check; a statement written once, with the
 * primary as a `param`.
 */
export const primaryChange = (primaryIdentityId: string | Expression<string>): UpdateObject<Database, "users"> => ({
  primary_identity_id: primaryIdentityId,
  version: sql<number>`version + 1`,
});

/**
 * Saves a new primary without any lock (for writers that hold none). With
 * `expectedVersion`, writes only if nobody else wrote since that version was read. Whether it was written.
 */
export async function savePrimary(
  db: Kysely<Database>,
  userId: string,
  primaryIdentityId: string,
  expectedVersion?: number,
): Promise<boolean> {
  let update = db.updateTable("users").set(primaryChange(primaryIdentityId)).where("id", "=", userId);
  if (expectedVersion !== undefined) update = update.where("version", "=", expectedVersion);
  return (await update.executeTakeFirst()).numUpdatedRows === 1n;
}

/** A rename's save: the name and the version only, so it never undoes a switch saved since it read. */
export async function saveDisplayName(db: Kysely<Database>, userId: string, displayName: string): Promise<void> {
  await db
    .updateTable("users")
    .set({ display_name: displayName, version: sql<number>`version + 1` })
    .where("id", "=", userId)
    .execute();
}

export async function readVersion(db: Kysely<Database>, userId: string): Promise<number | null> {
  const row = await db.selectFrom("users").select("version").where("id", "=", userId).executeTakeFirst();
  return row?.version ?? null;
}

export async function identitiesOf(db: Kysely<Database>, userId: string): Promise<Identity[]> {
  const rows = await db
    .selectFrom("identities")
    .select(["id", "provider", "provider_user_id", "label"])
    .where("user_id", "=", userId)
    .orderBy("position")
    .execute();
  return rows.map((row) => ({
    id: row.id,
    provider: row.provider,
    providerUserId: row.provider_user_id,
    label: row.label,
  }));
}
