import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { IdentityNotLinked, Problem, UserNotFound } from "../core/problems";
import { countByStatus } from "../core/status-counts";
import type { IdentityProviderClient } from "../provider/client";
import { identitiesOf } from "../switch/users";
import { auditConsistency, type UserAudit } from "./audit";
import { promote } from "./promote";

export interface BurstRequest {
  userId: string;
  count: number;
  /** Every request targets this identity; without it, each picks one of the user's identities at random. */
  identityId?: string;
  /** The targets in turn: request i targets `identityIds[i % length]` (e.g. two different identities at once). */
  identityIds?: string[];
}

export interface BurstReport {
  counts: Record<string, number>;
  results: { identityId: string; status: number; operationId: string; problem?: string }[];
  audit: UserAudit;
  consistent: boolean;
}

/** Fires `count` switches for one user at the same moment, in this process, and summarises them. */
export async function fireBurst(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  request: BurstRequest,
): Promise<BurstReport> {
  const identities = await identitiesOf(db, request.userId);
  if (identities.length === 0) throw new UserNotFound(request.userId);
  const named = request.identityIds ?? (request.identityId ? [request.identityId] : []);
  const unlinked = named.find((identityId) => !identities.some((identity) => identity.id === identityId));
  if (unlinked) throw new IdentityNotLinked(unlinked, request.userId);
  const targets = Array.from({ length: request.count }, (_, index) =>
    named.length > 0 ? named[index % named.length]! : identities[Math.floor(Math.random() * identities.length)]!.id,
  );
  // Each request's id known before it runs: a refused one's result names its lane too.
  const operationIds = targets.map(() => randomUUID());
  const settled = await Promise.allSettled(
    targets.map((identityId, index) =>
      promote(db, provider, { userId: request.userId, identityId, operationId: operationIds[index] }),
    ),
  );

  const results = settled.map((outcome, index) => {
    const [identityId, operationId] = [targets[index]!, operationIds[index]!];
    if (outcome.status === "fulfilled") return { identityId, status: 200, operationId };
    const problem = outcome.reason instanceof Problem ? outcome.reason : null;
    if (!problem) console.error("[burst] unexpected failure:", outcome.reason);
    return { identityId, status: problem?.status ?? 500, operationId, problem: problem?.title ?? "Internal error" };
  });
  const counts = countByStatus(results);
  const report = await auditConsistency(db);
  return {
    counts,
    results,
    audit: report.users.find((user) => user.userId === request.userId)!,
    consistent: report.consistent,
  };
}
