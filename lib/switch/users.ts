import { sql, type Kysely, type Selectable, type UpdateObject } from "kysely";
import { z } from "zod";
import type { Database, UsersTable } from "../../db/schema";
import { identityActionLease } from "./identity-action-lease";

/** A user as the rest of the code reads and writes it: the lease columns are not part of it. */
export interface User {
  id: string;
  displayName: string;
  primaryIdentityId: string;
}

/** The lease's columns, as an entity that maps them as fields carries them. */
export interface LockColumns {
  lockedAt: Date | null;
  lockedUntil: Date | null;
  token: string | null;
  fence: string;
}

/** A user read with every column (what an ORM mapping the lock columns loads): saving it writes them back. */
export interface UserWithLock extends User {
  lock: LockColumns;
}

export interface Identity {
  id: string;
  provider: string;
  providerUserId: string;
  label: string;
}

export interface UserView extends User {
  identities: (Identity & { isPrimary: boolean })[];
  lease: { held: boolean; expiresAt: string | null };
  /** While the lease is held: the running switch and the last step it reached (from its journal). */
  operation: { operationId: string; fromIdentityId: string; toIdentityId: string; step: string } | null;
}

export const userIdSchema = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,62}$/, "must be a demo user's id (lowercase letters, digits, dashes)");
export const identityIdSchema = z
  .string()
  .max(255)
  .regex(/^[a-z0-9-]+\|[^|\s]+$/, 'must look like "provider|providerUserId", e.g. "github|8812"');

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

/** The user with its lease columns, as an ORM that maps them as entity fields reads it. */
export async function findUserWithLock(db: Kysely<Database>, userId: string): Promise<UserWithLock | null> {
  const row = await db
    .selectFrom("users")
    .select([
      "id",
      "display_name",
      "primary_identity_id",
      "identity_action_locked_at",
      "identity_action_locked_until",
      "identity_action_lock_token",
      "identity_action_fence",
    ])
    .where("id", "=", userId)
    .executeTakeFirst();
  if (!row) return null;
  return {
    ...userFromRow(row),
    lock: {
      lockedAt: row.identity_action_locked_at,
      lockedUntil: row.identity_action_locked_until,
      token: row.identity_action_lock_token,
      fence: row.identity_action_fence,
    },
  };
}

/**
 * The change a switch makes to the user row: the new primary and the version, nothing else, so it never
 * writes back a copy of the other columns (a rename that landed meanwhile keeps its name). The lease's
 * holder sends it through `lease.update`, which adds the owner check.
 */
export const primaryChange = (primaryIdentityId: string): UpdateObject<Database, "users"> => ({
  primary_identity_id: primaryIdentityId,
  version: sql<number>`version + 1`,
});

/**
 * Saves a new primary without any lock (the strategies that have none, and the support tool). With
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

/**
 * The save of an ORM that maps every column as an entity field, the lock's included: it writes back the
 * whole copy it read, so a switch saved since is undone and a lease taken since is wiped. What the lab's
 * `lockColumnMapped` shows; the product never saves this way.
 */
export async function saveWholeEntity(db: Kysely<Database>, user: UserWithLock): Promise<void> {
  await db
    .updateTable("users")
    .set({
      display_name: user.displayName,
      primary_identity_id: user.primaryIdentityId,
      version: sql<number>`version + 1`,
      identity_action_locked_at: user.lock.lockedAt,
      identity_action_locked_until: user.lock.lockedUntil,
      identity_action_lock_token: user.lock.token,
      identity_action_fence: user.lock.fence,
    })
    .where("id", "=", user.id)
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

export async function findIdentityOf(
  db: Kysely<Database>,
  userId: string,
  identityId: string,
): Promise<Identity | null> {
  return (await identitiesOf(db, userId)).find((identity) => identity.id === identityId) ?? null;
}

export async function getUserView(db: Kysely<Database>, userId: string): Promise<UserView | null> {
  const [user, identities, lease] = await Promise.all([
    findUser(db, userId),
    identitiesOf(db, userId),
    identityActionLease.inspect(db, userId),
  ]);
  if (!user || !lease) return null;
  const running = lease.held
    ? await db
        .selectFrom("switch_journal")
        .select(["operation_id", "from_identity_id", "to_identity_id", "step"])
        .where("user_id", "=", userId)
        .orderBy("id", "desc")
        .limit(1)
        .executeTakeFirst()
    : undefined;
  return {
    ...user,
    identities: identities.map((identity) => ({ ...identity, isPrimary: identity.id === user.primaryIdentityId })),
    lease: { held: lease.held, expiresAt: lease.held ? (lease.expiresAt?.toISOString() ?? null) : null },
    operation: running
      ? {
          operationId: running.operation_id,
          fromIdentityId: running.from_identity_id,
          toIdentityId: running.to_identity_id,
          step: running.step,
        }
      : null,
  };
}
