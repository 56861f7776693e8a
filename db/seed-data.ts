import { identityIdOf } from "./schema";

/** The demo data: who can sign in, and what each one has linked at the identity provider. */
export interface SeedIdentity {
  provider: "google-oauth2" | "github" | "auth0" | "apple";
  providerUserId: string;
  label: string;
}

export interface SeedUser {
  id: string;
  displayName: string;
  /** The first identity is the primary one. */
  identities: SeedIdentity[];
}

export const seedUsers: SeedUser[] = [
  {
    id: "ada",
    displayName: "Ada Lovelace",
    identities: [
      { provider: "google-oauth2", providerUserId: "104423", label: "Google · ada@gmail.test" },
      { provider: "github", providerUserId: "8812", label: "GitHub · @ada" },
      { provider: "auth0", providerUserId: "ada-email", label: "Email · ada@analytical.test" },
      { provider: "apple", providerUserId: "001122.ada", label: "Apple · ada@icloud.test" },
    ],
  },
  {
    id: "grace",
    displayName: "Grace Hopper",
    identities: [
      { provider: "github", providerUserId: "1906", label: "GitHub · @grace" },
      { provider: "google-oauth2", providerUserId: "77", label: "Google · grace@gmail.test" },
      { provider: "auth0", providerUserId: "grace-email", label: "Email · grace@navy.test" },
    ],
  },
  {
    id: "alan",
    displayName: "Alan Turing",
    identities: [
      { provider: "auth0", providerUserId: "alan-email", label: "Email · alan@bletchley.test" },
      { provider: "apple", providerUserId: "000912.alan", label: "Apple · alan@icloud.test" },
    ],
  },
  {
    id: "katherine",
    displayName: "Katherine Johnson",
    identities: [
      { provider: "apple", providerUserId: "1918.kj", label: "Apple · katherine@icloud.test" },
      { provider: "google-oauth2", providerUserId: "2020", label: "Google · katherine@gmail.test" },
      { provider: "github", providerUserId: "3030", label: "GitHub · @katherine" },
    ],
  },
];

export const identityId = (identity: Pick<SeedIdentity, "provider" | "providerUserId">): string =>
  identityIdOf(identity.provider, identity.providerUserId);

/** The provider's side of the seed (or of `users`): one account per user, its primary identity first. */
export function seedProviderAccounts(
  users: SeedUser[] = seedUsers,
): { userId: string; identities: { provider: string; userId: string }[] }[] {
  return users.map((user) => ({
    userId: identityId(user.identities[0]!),
    identities: user.identities.map((identity) => ({ provider: identity.provider, userId: identity.providerUserId })),
  }));
}
