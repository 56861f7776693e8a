/**
 * What a run reads of the lab for its replay: the state at one moment (the provider's accounts of the run's
 * user, the user row, the lease, and at a variant's end the audit), and a variant's lanes once it has ended.
 * Reads go through the lab's own pool, so that recording never queues behind (nor shows up in) the app's
 * pool a run measures.
 */
import { sql } from "kysely";
import { fetchProviderState, type ProviderCall } from "../../provider-sim/lab-client";
import { findUser, identityActionLease } from "../../switch/users";
import { auditConsistency } from "../audit";
import { instrumentDb } from "../instrument-db";
import type { Lane, Phase, PhaseOutcome } from "../lane";
import type { HistoryOp, RunSnapshot } from "./runs";

/** A request of the run as its recorder knows it: enough to draw a lane for one that records none. */
export interface RecordedRequest {
  operationId: string;
  label: string;
  f: HistoryOp["f"];
  toIdentityId: string | null;
  invokedAt: string;
  answeredAt: string | null;
  status: number | null;
}

/** The state of `userId` now: the accounts holding one of `identityIds`, the user row, the lease, the audit. */
export async function readSnapshot(userId: string, identityIds: readonly string[], withAudit: boolean) {
  const db = instrumentDb();
  const at = new Date().toISOString();
  const [state, lease, user, audit] = await Promise.all([
    fetchProviderState(),
    identityActionLease.inspect(db, userId),
    findUser(db, userId),
    withAudit ? auditConsistency(db) : null,
  ]);
  const ours = state.accounts.filter((account) =>
    account.identities.some((identity) => identityIds.includes(`${identity.provider}|${identity.user_id}`)),
  );
  const userAudit = audit?.users.find((each) => each.userId === userId);
  const snapshot: RunSnapshot = {
    at,
    accounts: ours.map((account) => ({
      user_id: account.user_id,
      identities: account.identities.map(({ provider, user_id }) => ({ provider, user_id })),
    })),
    localPrimaryIdentityId: user?.primaryIdentityId ?? null,
    lease: lease
      ? {
          held: lease.held,
          expiresAt: lease.expiresAt?.toISOString() ?? null,
          fence: lease.fence.toString(),
          generation: lease.generation?.toString() ?? null,
        }
      : null,
    audit: userAudit ? { consistent: userAudit.consistent, violations: userAudit.violations } : null,
  };
  return snapshot;
}

/** The phase a provider call of a lane-less request (the support tool, a rename) stands for. */
const phaseOfMethod: Record<string, Phase["name"]> = { GET: "recover", DELETE: "unlink", POST: "link" };

/** What a lane drawn from the provider's log names as its strategy: only these requests record none. */
const lanelessStrategy: Record<HistoryOp["f"], string> = {
  "support-switch": "support tool (no lock)",
  rename: "rename (no lease)",
  // Both record their lanes; one missing (its process died first) is named as what it is.
  switch: "switch (its lane was not recorded)",
  acquire: "acquisition (its lane was not recorded)",
};

/**
 * The provider accounts a logged call touched, read off its path (`/api/v2/users/{id}/identities/{provider}/
 * {user_id}`): the account it was sent to, and the identity it unlinked.
 */
function accountsOf(call: ProviderCall): string[] {
  const [, id, , provider, userId] = call.path.replace(/^\/api\/v2\/users\//, "/").split("/");
  return [id, provider && userId ? `${provider}|${userId}` : undefined]
    .filter((part): part is string => Boolean(part))
    .map((part) => decodeURIComponent(part));
}

/** A lane drawn from the provider's log, for a request that records none of its own (it takes no lease). */
function laneFromCalls(userId: string, request: RecordedRequest, calls: ProviderCall[]): Lane {
  const phases: Phase[] = calls
    .filter((call) => call.operationId === request.operationId && phaseOfMethod[call.method])
    .map((call) => ({
      name: phaseOfMethod[call.method]!,
      startedAt: new Date(Date.parse(call.at) - call.durationMs).toISOString(),
      endedAt: call.at,
      outcome: (call.outcome ?? String(call.status)) as PhaseOutcome,
      detail: `${call.method} ${call.path}`,
      accounts: accountsOf(call),
    }));
  return {
    operationId: request.operationId,
    userId,
    instance: "",
    strategy: lanelessStrategy[request.f],
    toIdentityId: request.toIdentityId,
    requestedAt: request.invokedAt,
    answeredAt: request.answeredAt,
    status: request.status,
    problemType: null,
    phases,
    lease: null,
  };
}

/** The lanes of these operations, as the timeline recorded them, or drawn from the provider's log. */
export async function readLanes(
  userId: string,
  operationIds: string[],
  requests: Map<string, RecordedRequest>,
): Promise<Lane[]> {
  const { rows } = await sql<{ lane: Lane }>`
    SELECT lab_lane_json(l) AS lane FROM operation_lanes l
     WHERE l.operation_id = ANY (${operationIds}::uuid[]) ORDER BY l.requested_at`.execute(instrumentDb());
  const recorded = new Set(rows.map((row) => row.lane.operationId));
  const laneless = operationIds.flatMap((id) => {
    const request = requests.get(id);
    return request && !recorded.has(id) ? [request] : [];
  });
  const calls = laneless.length > 0 ? (await fetchProviderState()).calls : [];
  return [...rows.map((row) => row.lane), ...laneless.map((request) => laneFromCalls(userId, request, calls))];
}
