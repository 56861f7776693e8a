/** The user as the page reads it: the row, its identities, its lease, and the switch running now. */
import { sql, type Kysely } from "kysely";
import { CompiledStatements, none, param } from "@lease-lock-lab/lease";
import type { Database } from "../../db/schema";
import type { Requirement } from "./guard";
import type { Identity, User } from "./users";

export interface UserView extends User {
  identities: (Identity & { isPrimary: boolean })[];
  lease: { held: boolean; expiresAt: string | null };
  /** While the lease is held: the running switch and the last step it reached (from its journal). */
  operation: { operationId: string; fromIdentityId: string; toIdentityId: string; step: string } | null;
}

interface ViewRow {
  id: string;
  display_name: string;
  primary_identity_id: string;
  identities: Identity[];
  expires_at: Date | null;
  operation: UserView["operation"];
}

// Compiled once for each requirement's condition (and once without one).
const viewStatements = new CompiledStatements();

/**
 * One statement: the user, its identities in order, its lease as the database sees it (held while its expiry
 * is ahead), and, while it is held, the running switch from its journal. With `requires` (the caller's
 * session), checked by the same statement: when it fails, its reason is the answer.
 */
export async function getUserView(
  db: Kysely<Database>,
  userId: string,
  requires?: Requirement,
): Promise<UserView | null> {
  const condition = requires?.condition ?? sql<boolean>`true`;
  const build = () => sql<ViewRow>`
    SELECT u.id, u.display_name, u.primary_identity_id,
           coalesce((SELECT json_agg(json_build_object('id', i.id, 'provider', i.provider,
                                     'providerUserId', i.provider_user_id, 'label', i.label) ORDER BY i.position)
                       FROM identities i WHERE i.user_id = u.id), '[]'::json) AS identities,
           CASE WHEN u.identity_action_locked_until > now() THEN u.identity_action_locked_until END AS expires_at,
           CASE WHEN u.identity_action_locked_until > now() THEN
             (SELECT json_build_object('operationId', j.operation_id, 'fromIdentityId', j.from_identity_id,
                                       'toIdentityId', j.to_identity_id, 'step', j.step)
                FROM switch_journal j WHERE j.user_id = u.id ORDER BY j.id DESC LIMIT 1) END AS operation
      FROM users u
     WHERE u.id = ${param("viewedUserId")} AND ${condition}`;
  const values = { ...requires?.values, viewedUserId: userId };
  const { rows } = await viewStatements.run(db, [requires?.condition ?? none], build, values);
  const row = rows[0];
  if (!row) {
    const why = await requires?.unmet(db);
    if (why) throw why;
    return null;
  }
  return {
    id: row.id,
    displayName: row.display_name,
    primaryIdentityId: row.primary_identity_id,
    identities: row.identities.map((identity) => ({
      ...identity,
      isPrimary: identity.id === row.primary_identity_id,
    })),
    lease: { held: row.expires_at !== null, expiresAt: row.expires_at?.toISOString() ?? null },
    operation: row.operation,
  };
}
