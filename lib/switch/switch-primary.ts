/**
 * The operation: promote one of a user's linked identities to primary. At the provider that is two
 * non-atomic calls (unlink the target from the current primary, then link the old primary under the
 * target), so concurrent runs for one user must be kept apart. The steps are written once; a guard
 * (lease-guard.ts, or the lab's wrong strategies) only decides how they are kept apart.
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { IdentityNotLinked, UserNotFound } from "../core/problems";
import type { IdentityProviderClient, ProviderCallContext } from "../provider/client";
import { defaultMaxHoldMs } from "../lease";
import type { Guard } from "./guard";
import { withIdempotencyKey } from "./idempotency";
import { linkTolerant, providerStep } from "./provider-steps";
import { recoverSwitch } from "./recovery";
import { findIdentityOf, findUser } from "./users";

export interface PromoteRequest {
  userId: string;
  identityId: string;
  /** Given by callers that must know the id before the answer (idempotent requests). */
  operationId?: string;
}

export interface PromoteResult {
  primaryIdentityId: string;
  changed: boolean;
  operationId: string;
}

export async function promoteToPrimary(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  guard: Guard,
  request: PromoteRequest,
): Promise<PromoteResult> {
  const { userId, identityId } = request;
  if (!(await findIdentityOf(db, userId, identityId))) {
    throw (await findUser(db, userId)) ? new IdentityNotLinked(identityId, userId) : new UserNotFound(userId);
  }

  const operationId = request.operationId ?? randomUUID();
  const outcome = await guard.run({ db, userId, operationId, targetIdentityId: identityId }, async (section) => {
    const context: ProviderCallContext = {
      operationId,
      deadline: section.deadline,
      fence: section.fence,
      generation: section.generation,
    };
    // Whatever an earlier holder left half-done is settled first, against what the provider says.
    for (const entry of section.leftovers) await recoverSwitch(section, provider, context, entry);

    // Read inside the guarded section: state read before it may already be stale.
    const user = section.acquiredUser ?? (await findUser(section.db, userId));
    if (!user) throw new UserNotFound(userId);
    await section.reached("acquired", user.primaryIdentityId);
    if (user.primaryIdentityId === identityId) return { primaryIdentityId: identityId, changed: false };

    await providerStep(section, "unlink", () => provider.unlinkIdentity(user.primaryIdentityId, identityId, context));
    await section.reached("unlinked");
    await providerStep(section, "link", () => linkTolerant(provider, identityId, user.primaryIdentityId, context));
    await section.reached("linked");
    await section.savePrimary(identityId, { finishing: true });
    return { primaryIdentityId: identityId, changed: true };
  });
  return { ...outcome, operationId };
}

/**
 * Settles what earlier operations left half-done for `userId`, under the guard like any switch, and
 * switches nothing itself: what the background reconciler runs.
 */
export async function settleLeftovers(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  guard: Guard,
  userId: string,
): Promise<{ operationId: string; settled: number }> {
  const operationId = randomUUID();
  const settled = await guard.run({ db, userId, operationId, targetIdentityId: null }, async (section) => {
    const context: ProviderCallContext = {
      operationId,
      deadline: section.deadline,
      fence: section.fence,
      generation: section.generation,
    };
    for (const entry of section.leftovers) await recoverSwitch(section, provider, context, entry);
    return section.leftovers.length;
  });
  return { operationId, settled };
}

/**
 * `promoteToPrimary` under an Idempotency-Key: a repeat gets the first answer without calling the
 * provider again. A claim is stale (its request died) after `staleAfterMs`, when no lease it could
 * hold can still be alive.
 */
export function promoteToPrimaryOnce(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  guard: Guard,
  request: PromoteRequest & { idempotencyKey: string; staleAfterMs: number },
): Promise<PromoteResult> {
  const scope = {
    userId: request.userId,
    key: request.idempotencyKey,
    request: { identityId: request.identityId },
    staleAfterMs: request.staleAfterMs,
  };
  return withIdempotencyKey(db, scope, (operationId) =>
    promoteToPrimary(db, provider, guard, { ...request, operationId }),
  );
}

/**
 * A switch as the route takes it: under its Idempotency-Key when it has one. A key's claim is stale once no
 * lease its request could hold (renewals included) can still be alive.
 */
export function promoteRequest(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  guard: Guard,
  request: PromoteRequest,
  { idempotencyKey, leaseTtlMs }: { idempotencyKey: string | undefined; leaseTtlMs: number },
): Promise<PromoteResult> {
  if (idempotencyKey === undefined) return promoteToPrimary(db, provider, guard, request);
  const staleAfterMs = 2 * defaultMaxHoldMs(leaseTtlMs);
  return promoteToPrimaryOnce(db, provider, guard, { ...request, idempotencyKey, staleAfterMs });
}
