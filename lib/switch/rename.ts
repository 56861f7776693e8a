/**
 * The other writer of the user row: a rename. It reads the user, updates the name at the provider (one
 * call), then saves the user through the same entity save as the switch. It takes no lease: a rename does
 * not race the provider's linking. Whether its save writes the lease's columns back depends on whether
 * they are mapped as entity fields, which is the lesson of the lab's `lockColumnMapped`.
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { ProviderDeadlineExceeded, ProviderStepFailed, UserNotFound } from "../core/problems";
import { Deadline } from "../lease";
import { ProviderCallError, type IdentityProviderClient } from "../provider/client";
import { findUser, findUserWithLock, getUserView, saveUser, type UserView } from "./users";

export interface RenameRequest {
  userId: string;
  displayName: string;
  /** Given by callers that must know the id before the answer (the lab's experiments). */
  operationId?: string;
}

export interface RenameOptions {
  /** Read (and so save) the user with its lock columns, as an ORM that maps them does. */
  lockColumnMapped: boolean;
  /** How long the provider call may take. */
  timeoutMs: number;
}

export async function renameUser(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  request: RenameRequest,
  options: RenameOptions,
): Promise<UserView> {
  const { userId, displayName } = request;
  const user = options.lockColumnMapped ? await findUserWithLock(db, userId) : await findUser(db, userId);
  if (!user) throw new UserNotFound(userId);
  const deadline = new Deadline(options.timeoutMs);
  try {
    const context = { operationId: request.operationId ?? randomUUID(), deadline };
    await provider.renameAccount(user.primaryIdentityId, displayName, context);
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    throw error.kind === "deadline"
      ? new ProviderDeadlineExceeded("rename")
      : new ProviderStepFailed("rename", error.status, error.message);
  } finally {
    deadline.dispose();
  }
  // The copy read at the start, with the new name: whatever it carries is written back.
  await saveUser(db, { ...user, displayName });
  return (await getUserView(db, userId))!;
}
