/**
 * What must be so for a switch to run (the caller's session is this user's, the identity is one of the
 * user's own), as one SQL condition that the statement taking hold checks with everything else: one round
 * trip. Only when it fails are the parts read again, to say which one (a 401, a 403, a 404).
 */
import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Database } from "../../db/schema";
import { IdentityNotLinked, UserNotFound, type Problem } from "../core/problems";
import { findUser } from "./users";

export interface Requirement {
  /** True while it holds, for the WHERE of the statement that takes hold. */
  condition: RawBuilder<boolean>;
  /** Why it does not hold now (read on that path only); null when it does hold now. */
  unmet(db: Kysely<Database>): Promise<Problem | null>;
}

const holds = async (db: Kysely<Database>, condition: RawBuilder<boolean>): Promise<boolean> =>
  (await sql<{ holds: boolean }>`SELECT ${condition} AS holds`.execute(db)).rows[0]!.holds;

/** The requirement that `condition` holds; when it does not, `why` says what that means. */
export const requirement = (
  condition: RawBuilder<boolean>,
  why: (db: Kysely<Database>) => Promise<Problem>,
): Requirement => ({
  condition,
  unmet: async (db) => ((await holds(db, condition)) ? null : why(db)),
});

/** Every part must hold; the first that does not says why. */
export function allOf(parts: Requirement[]): Requirement {
  return {
    condition: sql<boolean>`(${sql.join(
      parts.map((part) => part.condition),
      sql` AND `,
    )})`,
    async unmet(db) {
      for (const part of parts) {
        const why = await part.unmet(db);
        if (why) return why;
      }
      return null;
    },
  };
}

/** Checks a requirement in a statement of its own, for guards that take hold without one of theirs. */
export async function requireNow(db: Kysely<Database>, required: Requirement): Promise<void> {
  const why = await required.unmet(db);
  if (why) throw why;
}

/** The identity is one of the user's own: else 404, not linked (or no such user). */
export const identityOfUser = (userId: string, identityId: string): Requirement =>
  requirement(
    sql<boolean>`EXISTS (SELECT 1 FROM identities WHERE user_id = ${userId} AND id = ${identityId})`,
    async (db) => ((await findUser(db, userId)) ? new IdentityNotLinked(identityId, userId) : new UserNotFound(userId)),
  );
