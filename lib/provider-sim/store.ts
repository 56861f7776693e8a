/**
 * The simulated identity provider's own state (schema `idp`). Each exported operation is atomic on its
 * own, like one call to the real provider; a sequence of them is not. Only the simulator uses this (and
 * the bench, to add its users' accounts).
 */
import { sql, type Kysely, type RawBuilder } from "kysely";
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

/**
 * The caller's fencing token (the fence, and the generation it was issued in) and its holder (the operation
 * id its calls carry); whether the provider refuses tokens older than one it has seen, or equal to one
 * another holder brought; and whether it compares generations (false: the fence alone, as before them).
 */
export interface Fencing {
  fence: bigint | null;
  generation: bigint | null;
  holder: string | null;
  enforce: boolean;
  byGeneration: boolean;
}

const tokenOf = ({ fence, generation }: Fencing) =>
  sql`${fence?.toString() ?? null}::bigint, ${generation?.toString() ?? null}::bigint`;

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
export function getAccount(db: Kysely<IdpDatabase>, accountId: string, fencing: Fencing): Promise<IdpAccount> {
  return providerCall<IdpAccount>(
    db,
    sql`idp.get_account(${accountId}, ${tokenOf(fencing)}, ${fencing.holder}::text, ${fencing.byGeneration})`,
  );
}

/** `DELETE /users/{primaryId}/identities/{provider}/{userId}`: the identity becomes an account of its own. */
export function unlinkIdentity(
  db: Kysely<IdpDatabase>,
  primaryId: string,
  provider: string,
  userId: string,
  fencing: Fencing,
): Promise<IdpIdentity[]> {
  const { holder, enforce, byGeneration } = fencing;
  return providerCall<IdpIdentity[]>(
    db,
    sql`idp.unlink_identity(${primaryId}, ${provider}, ${userId}, ${tokenOf(fencing)}, ${holder}::text, ${enforce}, ${byGeneration})`,
  );
}

/** `POST /users/{primaryId}/identities`: the secondary account and all linked under it move under primary. */
export function linkAccount(
  db: Kysely<IdpDatabase>,
  primaryId: string,
  provider: string,
  userId: string,
  fencing: Fencing,
): Promise<IdpIdentity[]> {
  const { holder, enforce, byGeneration } = fencing;
  return providerCall<IdpIdentity[]>(
    db,
    sql`idp.link_account(${primaryId}, ${provider}, ${userId}, ${tokenOf(fencing)}, ${holder}::text, ${enforce}, ${byGeneration})`,
  );
}

/** The SQLSTATE with which the provider's functions refuse a call (db/migrations/0008_idp_call_functions.ts). */
const refusedState = "IDP01";

/**
 * One call, atomic on its own like a call to the real provider: a database function (one round trip), whose
 * refusal carries the provider's error as JSON.
 */
async function providerCall<T>(db: Kysely<IdpDatabase>, call: RawBuilder<unknown>): Promise<T> {
  try {
    const { rows } = await sql<{ answer: T }>`SELECT ${call} AS answer`.execute(db);
    return rows[0]!.answer;
  } catch (error) {
    const { code, detail } = error as { code?: string; detail?: string };
    if (code !== refusedState || !detail) throw error;
    const refusal = JSON.parse(detail) as { statusCode: number; error: string; message: string; errorCode: string };
    throw new IdpError(refusal.statusCode, refusal.error, refusal.message, refusal.errorCode);
  }
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
    await insertProviderAccounts(trx, accounts);
  });
}

/** Adds `accounts` (each with its identities) to the provider's state. */
export async function insertProviderAccounts(db: Kysely<IdpDatabase>, accounts: SeedAccounts): Promise<void> {
  if (accounts.length === 0) return;
  await db
    .insertInto("idp.accounts")
    .values(accounts.map((account) => ({ user_id: account.userId })))
    .execute();
  await db
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
}

function toIdentity(row: { provider: string; user_id: string }): IdpIdentity {
  return { provider: row.provider, user_id: row.user_id, isSocial: row.provider !== "auth0" };
}
