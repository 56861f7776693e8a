/**
 * Users for the scaling runs: the demo seed has four, the runs need up to 64 switching at once plus a
 * bystander. The bench owns its database, so it writes them straight in after each lab reset (which puts
 * back the demo seed only), with the seed's own inserts: the app's rows and the simulated provider's
 * accounts (schema `idp`).
 */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema";
import { insertUsers } from "../db/seed";
import { identityId, seedProviderAccounts, type SeedUser } from "../db/seed-data";
import type { IdpDatabase } from "../lib/provider-sim/schema";
import { insertProviderAccounts } from "../lib/provider-sim/store";

export interface BenchUser {
  id: string;
  /** Its two identities; the first is primary at the start. */
  identities: [string, string];
}

const seedUserOf = (index: number): SeedUser => {
  const id = `bench-${String(index + 1).padStart(3, "0")}`;
  return {
    id,
    displayName: id,
    identities: [
      { provider: "auth0", providerUserId: `${id}-email`, label: `auth0|${id}-email` },
      { provider: "github", providerUserId: id, label: `github|${id}` },
    ],
  };
};

/** Adds `count` bench users, at the app and at the provider, each with two identities. */
export async function addBenchUsers(db: Kysely<Database>, count: number): Promise<BenchUser[]> {
  const users = Array.from({ length: count }, (_, index) => seedUserOf(index));
  await db.transaction().execute(async (trx) => {
    await insertUsers(trx, users);
    // The same connection writes the provider's schema, whose tables the app's database type leaves out.
    await insertProviderAccounts(trx as unknown as Kysely<IdpDatabase>, seedProviderAccounts(users));
  });
  return users.map((user) => ({
    id: user.id,
    identities: [identityId(user.identities[0]!), identityId(user.identities[1]!)],
  }));
}
