/**
 * The switch as the route and the reconciler run it, behind one interface: the product's (the lease with its
 * safeguards, as configured in `config.switch`), or a layer on top that takes its place (the lab's, with
 * LAB_ENABLED: its strategies, its timeline and its faults). lib/web/switch.ts picks one.
 */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { config } from "../core/config";
import type { IdentityProviderClient } from "../provider/client";
import { leaseGuard } from "./lease-guard";
import type { ReconcilePolicy } from "./reconciler";
import { renameUser, type RenameRequest } from "./rename";
import { promoteRequest, settleLeftovers, type PromoteRequest, type PromoteResult } from "./switch-primary";
import type { UserView } from "./users";

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
}

const productGuard = () =>
  leaseGuard({
    ttlMs: config.switch.leaseTtlMs,
    safeguards: true,
    applyLimitMs: config.switch.providerApplyLimitMs,
    providerFences: config.switch.providerEnforcesFencing,
  });

/** The product's switch: the lease with its safeguards, as configured. */
export const productSwitchLayer: SwitchLayer = {
  promote: (db, provider, request, idempotencyKey) =>
    promoteRequest(db, provider, productGuard(), request, { idempotencyKey, leaseTtlMs: config.switch.leaseTtlMs }),
  // The product's save never maps the lock columns: a rename cannot overwrite a lease it does not hold.
  rename: (db, provider, request) =>
    renameUser(db, provider, request, { lockColumnMapped: false, timeoutMs: config.switch.leaseTtlMs }),
  reconcilePolicy: async (db, provider) => ({
    reconcileAfterMs: config.switch.reconcileAfterMs,
    providerFences: config.switch.providerEnforcesFencing,
    settle: (userId) => settleLeftovers(db, provider, productGuard(), userId),
  }),
};
