/**
 * Users for the scaling runs: the demo seed has four, the runs need up to 64 switching at once plus a
 * bystander. The bench owns its database, so it writes them straight in after each lab reset (which puts
 * back the demo seed only): the app's rows and the simulated provider's accounts (schema `idp`).
 */
import { sql, type Kysely } from "kysely";
import { splitIdentityId, type Database } from "../db/schema";

export interface BenchUser {
  id: string;
  /** Its two identities; the first is primary at the start. */
  identities: [string, string];
}

export const benchUsers = (count: number): BenchUser[] =>
  Array.from({ length: count }, (_, index) => {
    const id = `bench-${String(index + 1).padStart(3, "0")}`;
    return { id, identities: [`auth0|${id}-email`, `github|${id}`] };
  });

export async function addBenchUsers(db: Kysely<Database>, users: BenchUser[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto("users")
      .values(users.map((user) => ({ id: user.id, display_name: user.id, primary_identity_id: user.identities[0] })))
      .execute();
    await trx
      .insertInto("identities")
      .values(
        users.flatMap((user) =>
          user.identities.map((identityId, position) => ({
            id: identityId,
            user_id: user.id,
            provider: splitIdentityId(identityId).provider,
            provider_user_id: splitIdentityId(identityId).providerUserId,
            label: identityId,
            position,
          })),
        ),
      )
      .execute();
    for (const user of users) {
      await sql`INSERT INTO idp.accounts (user_id) VALUES (${user.identities[0]})`.execute(trx);
      for (const identityId of user.identities) {
        const { provider, providerUserId: userId } = splitIdentityId(identityId);
        await sql`INSERT INTO idp.identities (provider, user_id, account_user_id)
                  VALUES (${provider}, ${userId}, ${user.identities[0]})`.execute(trx);
      }
    }
  });
}
