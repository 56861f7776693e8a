/**
 * The operation: promote one of a user's linked identities to primary. At the provider that is two
 * non-atomic calls (unlink the target from the current primary, then link the old primary under the
 * target), so concurrent runs for one user must be kept apart. The steps are written once; a strategy
 * (see `lib/strategies.ts`) only decides how they are guarded.
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema";
import { ProviderCallError, type IdentityProviderClient } from "./identity-provider";
import { getLabSettings } from "./lab-settings";
import { IdentityNotLinked, ProviderDeadlineExceeded, ProviderStepFailed, UserNotFound, type ProviderStep } from "./problems";
import { guards } from "./strategies";
import { findIdentityOf, findUser } from "./users";

export interface PromoteRequest {
  userId: string;
  identityId: string;
}

export interface PromoteResult {
  primaryIdentityId: string;
  changed: boolean;
  operationId: string;
}

export async function promoteToPrimary(db: Kysely<Database>, provider: IdentityProviderClient, request: PromoteRequest): Promise<PromoteResult> {
  const { userId, identityId } = request;
  const settings = await getLabSettings(db);
  if (!(await findIdentityOf(db, userId, identityId))) {
    throw (await findUser(db, userId)) ? new IdentityNotLinked(identityId, userId) : new UserNotFound(userId);
  }

  const operationId = randomUUID();
  const guard = guards[settings.strategy];
  const outcome = await guard.run({ db, userId, ttlMs: settings.leaseTtlMs }, async (section) => {
    // Read inside the guarded section: state read before it may already be stale.
    const user = await findUser(section.db, userId);
    if (!user) throw new UserNotFound(userId);
    if (user.primaryIdentityId === identityId) return { primaryIdentityId: identityId, changed: false };

    const context = { operationId, signal: section.signal, fence: section.fence };
    await providerStep("unlink", () => provider.unlinkIdentity(user.primaryIdentityId, identityId, context));
    await providerStep("link", () => provider.linkAccount(identityId, user.primaryIdentityId, context));
    await section.savePrimary(user, identityId);
    return { primaryIdentityId: identityId, changed: true };
  });
  return { ...outcome, operationId };
}

async function providerStep(step: ProviderStep, call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    if (error.kind === "deadline") throw new ProviderDeadlineExceeded(step);
    throw new ProviderStepFailed(step, error.status, error.message);
  }
}
