/**
 * The other writer of the user row: a rename. It reads the user, updates the name at the provider (one
 * call), then saves the name. It takes no lease: a rename does not race the provider's linking. Its save
 * writes only the name, so a switch saved meanwhile keeps its primary; with the lab's `lockColumnMapped`
 * it saves as an ORM that maps every column does, writing back the whole copy it read, the lease's
 * columns included: the lesson.
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { ProviderDeadlineExceeded, ProviderStepFailed, UserNotFound } from "../core/problems";
import { Deadline } from "../lease";
import { ProviderCallError, type IdentityProviderClient } from "../provider/client";
import { findUser, findUserWithLock, getUserView, saveDisplayName, saveWholeEntity, type UserView } from "./users";

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
  const mapped = options.lockColumnMapped ? await findUserWithLock(db, userId) : null;
  const user = mapped ?? (await findUser(db, userId));
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
  if (mapped) await saveWholeEntity(db, { ...mapped, displayName });
  else await saveDisplayName(db, userId, displayName);
  return (await getUserView(db, userId))!;
}
