/**
 * The other writer of the user row: a rename. It reads the user, updates the name at the provider (one
 * call), then saves the name. It takes no lease: a rename does not race the provider's linking. Its save
 * writes only the name, so a switch saved meanwhile keeps its primary.
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { UserNotFound } from "../core/problems";
import { Deadline } from "@lease-lock-lab/lease";
import { ProviderCallError, type IdentityProviderClient } from "../provider/client";
import { providerProblem } from "./provider-steps";
import { getUserView, type UserView } from "./user-view";
import { findUser, saveDisplayName, type User } from "./users";

export interface RenameRequest {
  userId: string;
  displayName: string;
  /** Given by callers that must know the id before the answer. */
  operationId?: string;
}

/** How a rename reads the user it renames and saves the new name: the product's reads the row, saves the name. */
export interface RenameEntity<U extends User> {
  read(db: Kysely<Database>, userId: string): Promise<U | null>;
  save(db: Kysely<Database>, user: U, displayName: string): Promise<void>;
}

export const userName: RenameEntity<User> = {
  read: findUser,
  save: (db, user, displayName) => saveDisplayName(db, user.id, displayName),
};

export async function renameUser<U extends User>(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  request: RenameRequest,
  /** How long the provider call may take. */
  timeoutMs: number,
  entity: RenameEntity<U>,
): Promise<UserView> {
  const { userId, displayName } = request;
  const user = await entity.read(db, userId);
  if (!user) throw new UserNotFound(userId);
  const deadline = new Deadline(timeoutMs);
  try {
    const context = { operationId: request.operationId ?? randomUUID(), deadline };
    await provider.renameAccount(user.primaryIdentityId, displayName, context);
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    throw providerProblem("rename", error, deadline);
  } finally {
    deadline.dispose();
  }
  await entity.save(db, user, displayName);
  return (await getUserView(db, userId))!;
}
