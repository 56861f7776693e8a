/**
 * The switch as the route and the reconciler run it, behind one interface: the product's (the lease, as
 * configured in `config.switch`), or another layer that takes its place. lib/web/switch.ts, the composition
 * root, picks one.
 */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import type { IdentityProviderClient } from "../provider/client";
import { config } from "../core/config";
import type { RunUnderLease } from "@lease-lock-lab/lease";
import { leaseGuard, productLeaseParts } from "./lease-guard";
import { startReconciler, type ReconcilePolicy } from "./reconciler";
import { renameUser, userName, type RenameRequest } from "./rename";
import { promoteRequest, settleLeftovers, type PromoteRequest, type PromoteResult } from "./switch-primary";
import type { UserView } from "./user-view";

export interface SwitchLayer {
  /** Runs one switch request (under its Idempotency-Key when it has one). */
  promote(
    db: Kysely<Database>,
    provider: IdentityProviderClient,
    request: PromoteRequest,
    idempotencyKey?: string,
  ): Promise<PromoteResult>;
  /** Renames the user: the other writer of the user row, which takes no lease. */
  rename(db: Kysely<Database>, provider: IdentityProviderClient, request: RenameRequest): Promise<UserView>;
  /** How the reconciler settles half-done switches now; null: no switch is journaled to settle. */
  reconcilePolicy(db: Kysely<Database>, provider: IdentityProviderClient): Promise<ReconcilePolicy | null>;
  /** What runs in the background of this process (the reconciler), started once. */
  start(db: Kysely<Database>, provider: IdentityProviderClient): void;
}

/**
 * The product's switch: the lease, as configured, its work run by `runUnderLease` (`withLease`, or a layer of its
 * shape around it: the composition root observes it in OpenTelemetry).
 */
export function productSwitchLayer(runUnderLease: RunUnderLease): SwitchLayer {
  const guard = () =>
    leaseGuard(
      {
        ttlMs: config.switch.leaseTtlMs,
        applyLimitMs: config.switch.providerApplyLimitMs,
        providerFences: config.switch.providerEnforcesFencing,
      },
      { ...productLeaseParts, runUnderLease },
    );
  const layer: SwitchLayer = {
    promote: (db, provider, request, idempotencyKey) =>
      promoteRequest(db, provider, guard(), request, { idempotencyKey, leaseTtlMs: config.switch.leaseTtlMs }),
    rename: (db, provider, request) => renameUser(db, provider, request, config.switch.leaseTtlMs, userName),
    reconcilePolicy: async (db, provider) => ({
      reconcileAfterMs: config.switch.reconcileAfterMs,
      providerFences: config.switch.providerEnforcesFencing,
      settle: (userId) => settleLeftovers(db, provider, guard(), userId),
    }),
    start: (db, provider) => startReconciler(db, () => layer.reconcilePolicy(db, provider)),
  };
  return layer;
}
