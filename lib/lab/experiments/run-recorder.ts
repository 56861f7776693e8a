/**
 * What a run records for its replay, as `lab.ts` drives it: the variants (each `fresh()` opens one, the
 * next closes it: its lanes are read then, before the reset wipes them), each request's invocation and
 * completion, and what the provider, the user row and the lease were after each answer. Reads go through
 * the lab's own pool, so that recording never queues behind (nor shows up in) the app's pool a run measures.
 */
import { sql } from "kysely";
import { fetchProviderState, type ProviderCall } from "../../provider-sim/lab-client";
import { identityActionLease } from "../../switch/lease-guard";
import { findUser } from "../../switch/users";
import { auditConsistency } from "../audit";
import { instrumentDb } from "../instrument-db";
import type { LabSettings } from "../settings-schema";
import type { Lane, Phase, PhaseOutcome } from "../lane";
import type { HistoryOp, RunSnapshot, RunVariant } from "./runs";

/** A variant's name on the picture when its experiment gives none: its strategy, safeguards and TTL. */
export function variantLabel(settings: LabSettings): string {
  const strategy =
    settings.strategy === "lease"
      ? settings.leaseSafeguards
        ? "lease with safeguards"
        : "textbook lease (safeguards off)"
      : settings.strategy;
  return `${strategy}, TTL ${settings.leaseTtlMs.toLocaleString("en")} ms`;
}

/**
 * Jepsen's completion types: `ok` it happened; `fail` it certainly did not (refused before any effect:
 * bad input, or another operation held the lease); `info` anything else, whose effect is unknown or partial
 * (a 504, a lost connection, a provider step failed, a write refused after the provider had changed).
 */
export function completionType(status: number, problemType: string | null): HistoryOp["type"] {
  if (status >= 200 && status < 300) return "ok";
  if ([400, 401, 403, 404, 422].includes(status)) return "fail";
  if (status === 409 && problemType === "operation-in-progress") return "fail";
  return "info";
}

interface Request {
  operationId: string;
  label: string;
  f: HistoryOp["f"];
  toIdentityId: string | null;
  invokedAt: string;
  answeredAt: string | null;
  status: number | null;
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

/** A lane drawn from the provider's log, for a request that records none of its own (it takes no lease). */
function laneFromCalls(userId: string, request: Request, calls: ProviderCall[]): Lane {
  const phases: Phase[] = calls
    .filter((call) => call.operationId === request.operationId && phaseOfMethod[call.method])
    .map((call) => ({
      name: phaseOfMethod[call.method]!,
      startedAt: new Date(Date.parse(call.at) - call.durationMs).toISOString(),
      endedAt: call.at,
      outcome: (call.outcome ?? String(call.status)) as PhaseOutcome,
      detail: `${call.method} ${call.path}`,
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

/** Records a run on `userId`, whose provider accounts are those holding one of `identityIds`. */
export function runRecorder(userId: string, identityIds: readonly string[]) {
  const variants: RunVariant[] = [];
  const history: HistoryOp[] = [];
  const snapshots: RunSnapshot[] = [];
  const lanes: Lane[] = [];
  const requests = new Map<string, Request>();
  let open: RunVariant | null = null;
  let reading: Promise<void> = Promise.resolve();
  let readQueued = false;

  async function snapshot(withAudit: boolean): Promise<void> {
    const db = instrumentDb();
    const at = new Date().toISOString();
    const [state, lease, user, audit] = await Promise.all([
      fetchProviderState(),
      identityActionLease.inspect(db, userId),
      findUser(db, userId),
      withAudit ? auditConsistency(db) : null,
    ]);
    const ours = new Set(
      state.accounts.flatMap((account) =>
        account.identities.some((identity) => identityIds.includes(`${identity.provider}|${identity.user_id}`))
          ? [account.user_id]
          : [],
      ),
    );
    const userAudit = audit?.users.find((each) => each.userId === userId);
    snapshots.push({
      at,
      accounts: state.accounts
        .filter((account) => ours.has(account.user_id))
        .map((account) => ({
          user_id: account.user_id,
          identities: account.identities.map(({ provider, user_id }) => ({ provider, user_id })),
        })),
      localPrimaryIdentityId: user?.primaryIdentityId ?? null,
      lease: lease
        ? { held: lease.held, expiresAt: lease.expiresAt?.toISOString() ?? null, fence: lease.fence.toString() }
        : null,
      audit: userAudit ? { consistent: userAudit.consistent, violations: userAudit.violations } : null,
    });
  }

  /** Reads the state after an answer; answers that come together share one read. */
  function snapshotSoon(): void {
    if (readQueued) return;
    readQueued = true;
    reading = reading.then(async () => {
      readQueued = false;
      await snapshot(false).catch((error: unknown) => console.error("[experiment] could not read the state:", error));
    });
  }

  async function closeVariant(): Promise<void> {
    await reading;
    if (!open) return;
    const variant = open;
    open = null;
    variant.endedAt = new Date().toISOString();
    await snapshot(true).catch((error: unknown) => console.error("[experiment] could not read the state:", error));
    const { rows } = await sql<{ lane: Lane }>`
      SELECT lab_lane_json(l) AS lane FROM operation_lanes l
       WHERE l.operation_id = ANY (${variant.operationIds}::uuid[]) ORDER BY l.requested_at`.execute(instrumentDb());
    const recorded = new Set(rows.map((row) => row.lane.operationId));
    const laneless = variant.operationIds.flatMap((id) => {
      const request = requests.get(id);
      return request && !recorded.has(id) ? [request] : [];
    });
    const calls = laneless.length > 0 ? (await fetchProviderState()).calls : [];
    lanes.push(...rows.map((row) => row.lane), ...laneless.map((request) => laneFromCalls(userId, request, calls)));
  }

  function belongs(operationId: string): void {
    open ??= { label: "the run", startedAt: new Date().toISOString(), endedAt: "", operationIds: [] };
    open.operationIds.push(operationId);
  }

  return {
    async openVariant(label: string): Promise<void> {
      open = { label, startedAt: new Date().toISOString(), endedAt: "", operationIds: [] };
      variants.push(open);
      await snapshot(false).catch((error: unknown) => console.error("[experiment] could not read the state:", error));
    },
    closeVariant,
    note: belongs,
    invoke(operationId: string, label: string, f: HistoryOp["f"], value: Record<string, unknown>): number {
      belongs(operationId);
      if (!variants.includes(open!)) variants.push(open!);
      const invokedAt = new Date().toISOString();
      const toIdentityId = typeof value.identityId === "string" ? value.identityId : null;
      requests.set(operationId, { operationId, label, f, toIdentityId, invokedAt, answeredAt: null, status: null });
      const process = history.filter((op) => op.type === "invoke").length;
      history.push({ process, type: "invoke", f, value, at: invokedAt, operationId, label });
      return process;
    },
    complete(
      process: number,
      operationId: string,
      label: string,
      f: HistoryOp["f"],
      status: number,
      problemType: string | null,
    ): void {
      const at = new Date().toISOString();
      Object.assign(requests.get(operationId)!, { answeredAt: at, status });
      const type = completionType(status, problemType);
      history.push({ process, type, f, value: { status, problemType }, at, operationId, label });
      snapshotSoon();
    },
    async finish() {
      await closeVariant();
      return { variants, history, snapshots, lanes };
    },
  };
}
