/**
 * The lab's wrong rename save: an ORM that maps every column of the user row as an entity field, the lease's
 * included. It reads the whole row at the start and writes the whole copy back at the end, so a switch saved
 * meanwhile is undone and a lease taken meanwhile is wiped (q4-lock-column-mapped). The product's rename
 * never saves this way.
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../../../db/schema";
import type { RenameEntity } from "../../switch/rename";
import { userFromRow, type User } from "../../switch/users";

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

/** The rename's entity as such an ORM reads and saves it: the whole row, the lease's columns included. */
export const mappedEntity: RenameEntity<UserWithLock> = {
  read: findUserWithLock,
  save: (db, user, displayName) => saveWholeEntity(db, { ...user, displayName }),
};
