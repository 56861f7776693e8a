import { identityIdOf } from "@/db/schema";
import { identityId, seedUsers } from "@/db/seed-data";
import type { ProviderState } from "./api";

/** The demo user each identity belongs to (identities never change hands; accounts at the provider do). */
const ownerOf = new Map(
  seedUsers.flatMap((user) => user.identities.map((identity) => [identityId(identity), user.displayName] as const)),
);

/** The provider's accounts, each with the identities linked under it and whose they are. */
export function ProviderAccounts({ accounts }: { accounts: ProviderState["accounts"] }) {
  return (
    <div>
      <h3>Accounts</h3>
      <ul className="accounts" aria-label="Provider accounts">
        {accounts.map((account) => (
          <li key={account.user_id}>
            <code>{account.user_id}</code> <span className="owner">{ownerOf.get(account.user_id) ?? ""}</span>
            {account.identities.length > 1 && (
              <ul>
                {account.identities.slice(1).map((identity) => {
                  const linkedId = identityIdOf(identity.provider, identity.user_id);
                  return (
                    <li key={linkedId}>
                      linked: <code>{linkedId}</code> <span className="owner">{ownerOf.get(linkedId) ?? ""}</span>
                    </li>
                  );
                })}
              </ul>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
