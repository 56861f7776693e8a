/**
 * The simulated identity provider's own state (schema `idp`). Each exported operation is atomic on its
 * own, like one call to the real provider; a sequence of them is not. Only the simulator uses this.
 */
import { sql, type Kysely, type Transaction } from "kysely";
import { identityIdOf } from "../../db/schema";
import { lockForReset } from "../../db/seed";
import type { IdpDatabase } from "./schema";

export interface IdpIdentity {
  provider: string;
  user_id: string;
  isSocial: boolean;
}

export interface IdpAccount {
  user_id: string;
  identities: IdpIdentity[];
}

/** An error the provider answers with, in Auth0's shape. */
export class IdpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly error: string,
    message: string,
    readonly errorCode: string,
  ) {
    super(message);
  }
}

/** The caller's fencing token, and whether the provider refuses tokens older than one it has seen. */
export interface Fencing {
  fence: bigint | null;
  enforce: boolean;
}

export async function listAccounts(db: Kysely<IdpDatabase>): Promise<IdpAccount[]> {
  const rows = await db
    .selectFrom("idp.identities")
    .select(["provider", "user_id", "account_user_id"])
    .orderBy("account_user_id")
    .orderBy(sql`(provider || '|' || user_id) = account_user_id`, "desc")
    .orderBy("linked_seq")
    .execute();
  const accounts = new Map<string, IdpAccount>();
  for (const row of rows) {
    const account = accounts.get(row.account_user_id) ?? { user_id: row.account_user_id, identities: [] };
    account.identities.push(toIdentity(row));
    accounts.set(row.account_user_id, account);
  }
  return [...accounts.values()];
}

/**
 * `GET /users/{id}`. A read carrying a fencing token registers it on the account first (a fenced read):
 * from then on, a write with an older token is refused when it is applied, so what the reader sees can
 * no longer be changed behind its back by a late write of an earlier holder.
 */
export async function getAccount(db: Kysely<IdpDatabase>, accountId: string, fencing: Fencing): Promise<IdpAccount> {
  return db.transaction().execute(async (trx) => {
    if (fencing.fence !== null) await registerFence(trx, [accountId], fencing.fence);
    const exists = await trx
      .selectFrom("idp.accounts")
      .select("user_id")
      .where("user_id", "=", accountId)
      .executeTakeFirst();
    if (!exists) throw userNotFound();
    return { user_id: accountId, identities: await identitiesOf(trx, accountId) };
  });
}

/** `DELETE /users/{primaryId}/identities/{provider}/{userId}`: the identity becomes an account of its own. */
export async function unlinkIdentity(
  db: Kysely<IdpDatabase>,
  primaryId: string,
  provider: string,
  userId: string,
  fencing: Fencing,
): Promise<IdpIdentity[]> {
  return db.transaction().execute(async (trx) => {
    const secondaryId = identityIdOf(provider, userId);
    if (secondaryId === primaryId)
      throw new IdpError(400, "Bad Request", "Main identity cannot be removed", "operation_not_supported");
    await lockAccounts(trx, [primaryId]);
    await checkFence(trx, [primaryId, secondaryId], fencing);
    if (!(await accountExists(trx, primaryId))) throw userNotFound();
    if (!(await isLinkedUnder(trx, primaryId, provider, userId)))
      throw new IdpError(404, "Not Found", "Identity not found", "inexistent_identity");
    await trx.insertInto("idp.accounts").values({ user_id: secondaryId }).execute();
    await trx
      .updateTable("idp.identities")
      .set({ account_user_id: secondaryId })
      .where("provider", "=", provider)
      .where("user_id", "=", userId)
      .execute();
    return identitiesOf(trx, primaryId);
  });
}

/** `POST /users/{primaryId}/identities`: the secondary account and all linked under it move under primary. */
export async function linkAccount(
  db: Kysely<IdpDatabase>,
  primaryId: string,
  provider: string,
  userId: string,
  fencing: Fencing,
): Promise<IdpIdentity[]> {
  return db.transaction().execute(async (trx) => {
    const secondaryId = identityIdOf(provider, userId);
    if (secondaryId === primaryId)
      throw new IdpError(400, "Bad Request", "Main identity and the new one are the same.", "invalid_body");
    await lockAccounts(trx, [primaryId, secondaryId]);
    await checkFence(trx, [primaryId, secondaryId], fencing);
    if (!(await accountExists(trx, primaryId))) throw userNotFound();
    if (await isLinkedUnder(trx, primaryId, provider, userId))
      throw new IdpError(409, "Conflict", "Specified identity already exists", "identity_conflict");
    if (!(await accountExists(trx, secondaryId)))
      throw new IdpError(400, "Bad Request", "Provided secondary account not found", "invalid_body");
    await trx
      .updateTable("idp.identities")
      .set({ account_user_id: primaryId })
      .where("account_user_id", "=", secondaryId)
      .execute();
    await trx.deleteFrom("idp.accounts").where("user_id", "=", secondaryId).execute();
    return identitiesOf(trx, primaryId);
  });
}

export type SeedAccounts = { userId: string; identities: { provider: string; userId: string }[] }[];

/** A provider with no accounts yet (a fresh database) gets `accounts`. */
export async function seedIfEmpty(db: Kysely<IdpDatabase>, accounts: SeedAccounts): Promise<void> {
  const any = await db.selectFrom("idp.accounts").select("user_id").limit(1).executeTakeFirst();
  if (!any) await resetProviderState(db, accounts);
}

/** Replaces the whole provider state (accounts and call log) with `accounts`. */
export async function resetProviderState(db: Kysely<IdpDatabase>, accounts: SeedAccounts): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockForReset(trx);
    await trx.deleteFrom("idp.identities").execute();
    await trx.deleteFrom("idp.accounts").execute();
    await trx.deleteFrom("idp.calls").execute();
    await trx.deleteFrom("idp.fences").execute();
    if (accounts.length === 0) return;
    await trx
      .insertInto("idp.accounts")
      .values(accounts.map((account) => ({ user_id: account.userId })))
      .execute();
    await trx
      .insertInto("idp.identities")
      .values(
        accounts.flatMap((account) =>
          account.identities.map((identity) => ({
            provider: identity.provider,
            user_id: identity.userId,
            account_user_id: account.userId,
          })),
        ),
      )
      .execute();
  });
}

// Account rows are locked in one order so that two concurrent links never deadlock.
async function lockAccounts(trx: Transaction<IdpDatabase>, accountIds: string[]): Promise<void> {
  await trx
    .selectFrom("idp.accounts")
    .select("user_id")
    .where("user_id", "in", [...accountIds].sort())
    .orderBy("user_id")
    .forUpdate()
    .execute();
}

/**
 * Kleppmann's fencing check, before any precondition: remembers the highest token seen per account and,
 * when enforcing, refuses a lower one. Calls without a token (unguarded strategies) pass.
 */
async function checkFence(
  trx: Transaction<IdpDatabase>,
  accountIds: string[],
  { fence, enforce }: Fencing,
): Promise<void> {
  if (fence === null) return;
  const seen = await trx
    .selectFrom("idp.fences")
    .select(["account_user_id", "fence"])
    .where("account_user_id", "in", accountIds)
    .forUpdate()
    .execute();
  const newer = seen.find((row) => BigInt(row.fence) > fence);
  if (newer && enforce) {
    throw new IdpError(
      409,
      "Conflict",
      `Fencing token ${fence} is older than token ${newer.fence}, already used on ${newer.account_user_id}`,
      "fenced_token",
    );
  }
  await registerFence(trx, accountIds, fence);
}

/** Remembers the highest token seen per account. */
async function registerFence(trx: Transaction<IdpDatabase>, accountIds: string[], fence: bigint): Promise<void> {
  await trx
    .insertInto("idp.fences")
    .values(accountIds.map((account_user_id) => ({ account_user_id, fence: fence.toString() })))
    .onConflict((conflict) =>
      conflict.column("account_user_id").doUpdateSet({ fence: sql`greatest(idp.fences.fence, excluded.fence)` }),
    )
    .execute();
}

async function accountExists(trx: Transaction<IdpDatabase>, accountId: string): Promise<boolean> {
  return (
    (await trx.selectFrom("idp.accounts").select("user_id").where("user_id", "=", accountId).executeTakeFirst()) !==
    undefined
  );
}

async function isLinkedUnder(
  trx: Transaction<IdpDatabase>,
  accountId: string,
  provider: string,
  userId: string,
): Promise<boolean> {
  const row = await trx
    .selectFrom("idp.identities")
    .select("user_id")
    .where("provider", "=", provider)
    .where("user_id", "=", userId)
    .where("account_user_id", "=", accountId)
    .executeTakeFirst();
  return row !== undefined;
}

async function identitiesOf(db: Kysely<IdpDatabase>, accountId: string): Promise<IdpIdentity[]> {
  const rows = await db
    .selectFrom("idp.identities")
    .select(["provider", "user_id", "account_user_id"])
    .where("account_user_id", "=", accountId)
    .orderBy(sql`(provider || '|' || user_id) = account_user_id`, "desc")
    .orderBy("linked_seq")
    .execute();
  return rows.map(toIdentity);
}

function toIdentity(row: { provider: string; user_id: string }): IdpIdentity {
  return { provider: row.provider, user_id: row.user_id, isSocial: row.provider !== "auth0" };
}

function userNotFound(): IdpError {
  return new IdpError(404, "Not Found", "The user does not exist.", "inexistent_user");
}
