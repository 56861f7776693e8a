/** The user as the page reads it: the row, its identities, its lease, and the switch running now. */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { identityActionLease } from "./identity-action-lease";
import { findUser, identitiesOf, type Identity, type User } from "./users";

export interface UserView extends User {
  identities: (Identity & { isPrimary: boolean })[];
  lease: { held: boolean; expiresAt: string | null };
  /** While the lease is held: the running switch and the last step it reached (from its journal). */
  operation: { operationId: string; fromIdentityId: string; toIdentityId: string; step: string } | null;
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
