/**
 * The switch's composition root: the product's switch, or with LAB_ENABLED the lab's layer on top of it.
 * The lab is loaded only when it is on, and in the bundle of whoever asks (a route, the instrumentation):
 * Next.js evaluates a module once per bundle, and the errors the lab's switch throws must be the classes
 * its caller's `instanceof` checks know.
 */
import type { Kysely } from "kysely";
import { withLease } from "@lease-lock-lab/lease";
import { observedLease } from "@lease-lock-lab/lease/telemetry";
import type { Database } from "../../db/schema";
import { config } from "../core/config";
import type { IdentityProviderClient } from "../provider/client";
import { reconcileRound } from "../switch/reconciler";
import { productSwitchLayer, type SwitchLayer } from "../switch/service";

/**
 * The product's switch as the app runs it: its lease in OpenTelemetry (spans and metrics; no-ops without an SDK).
 * Made when this module loads, which instrumentation.ts's `register` lets happen only after it set the SDK up (a
 * meter taken before a provider is registered stays a no-op).
 */
export const productSwitch = productSwitchLayer(observedLease(withLease));

const switchLayer = async (): Promise<SwitchLayer> =>
  config.labEnabled ? (await import("../lab/switch-layer")).labSwitchLayer : productSwitch;

export const promote: SwitchLayer["promote"] = async (db, provider, request, idempotencyKey) =>
  (await switchLayer()).promote(db, provider, request, idempotencyKey);

export const rename: SwitchLayer["rename"] = async (db, provider, request) =>
  (await switchLayer()).rename(db, provider, request);

/** One reconciliation round now, in this process. */
export const reconcileOnce = async (db: Kysely<Database>, provider: IdentityProviderClient): Promise<string[]> =>
  reconcileRound(db, await (await switchLayer()).reconcilePolicy(db, provider));

/** What runs in the background of this process, for the switch in force (the reconciler; with the lab, its settings). */
export const startBackground = async (db: Kysely<Database>, provider: IdentityProviderClient): Promise<void> =>
  (await switchLayer()).start(db, provider);
