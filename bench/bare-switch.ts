/**
 * The least switch with the lease's guarantees: bare-statements.ts's three statements around the unlink and the
 * link, the two provider calls through the product's transport (lib/provider/http-json.ts), stamped as the
 * app's are. No session, no lab, no recovery of leftovers, no reconciler. Served by `bare` (bare-server.ts,
 * behind bare `node:http`) and by `next-bare` (bench/next-bare, inside a minimal Next.js route), so that the
 * two differ only in the server around the same switch.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { splitIdentityId } from "../db/schema";
import { requestJson } from "../lib/provider/http-json";
import { sentAtStamp } from "../lib/provider-sim/call-timing";
import {
  acquireWithIntentOn,
  markUnlinkedOn,
  plainSaveOn,
  readPrimaryOn,
  releaseOn,
  saveAndReleaseOn,
} from "./bare-statements";

/** An answer's status and JSON body. */
export type BareAnswer = [number, unknown];

/**
 * The switch's two provider calls from `from` (the primary) to `to`: unlink `to` from it, then link the old
 * primary under `to`, each sent with `headers` and the app's sent-at stamp; a call answered other than 2xx throws.
 */
export function switchCalls(providerUrl: string) {
  async function providerCall(method: string, path: string, headers: Record<string, string>, body?: unknown) {
    const answer = await requestJson(`${providerUrl}${path}`, {
      method,
      headers: { ...headers, ...sentAtStamp() },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    if (answer.status < 200 || answer.status > 299)
      throw new Error(`the provider answered ${answer.status} to ${path}`);
  }

  return {
    unlink(from: string, to: string, headers: Record<string, string>) {
      const target = splitIdentityId(to);
      const path = `/api/v2/users/${encodeURIComponent(from)}/identities/${target.provider}/${encodeURIComponent(target.providerUserId)}`;
      return providerCall("DELETE", path, headers);
    },
    link(from: string, to: string, headers: Record<string, string>) {
      const old = splitIdentityId(from);
      const body = { provider: old.provider, user_id: old.providerUserId };
      return providerCall("POST", `/api/v2/users/${encodeURIComponent(to)}/identities`, headers, body);
    },
  };
}

/**
 * The switch on `pool` and the provider at `providerUrl`: 200 with the new primary, 409 while another holds the
 * lease (or the identity is not the user's).
 */
export function bareSwitch(pool: pg.Pool, providerUrl: string) {
  const calls = switchCalls(providerUrl);

  return async function promote(userId: string, identityId: string): Promise<BareAnswer> {
    const operationId = randomUUID();
    const holder = await acquireWithIntentOn(pool, userId, identityId, operationId);
    if (!holder) return [409, { title: "Another operation is already in progress, or no such identity" }];
    const from = holder.primary_identity_id;
    const headers = { "X-Operation-Id": operationId, "X-Fencing-Token": holder.fence };
    try {
      await calls.unlink(from, identityId, headers);
      await markUnlinkedOn(pool, userId, holder);
      await calls.link(from, identityId, headers);
      if (!(await saveAndReleaseOn(pool, userId, holder, identityId)))
        return [409, { title: "The lease was lost before the save" }];
      return [200, { primaryIdentityId: identityId, changed: true, operationId }];
    } catch (error) {
      await releaseOn(pool, userId, holder);
      return [502, { title: error instanceof Error ? error.message : String(error) }];
    }
  };
}

/**
 * Sent by the floors' `next-bare, none` (floor-waves.ts): next-bare answers with `unlockedSwitch` instead, in the
 * same process, so that the lease's cost over no lock is measured on one server.
 */
export const unlockedHeader = "x-bench-lock";

/**
 * The same switch without a lock, as the app's `none` runs it: the primary read, the two calls, one save; no
 * token, no journal. 404 when the identity is not the user's.
 */
export function unlockedSwitch(pool: pg.Pool, providerUrl: string) {
  const calls = switchCalls(providerUrl);

  return async function promote(userId: string, identityId: string): Promise<BareAnswer> {
    const operationId = randomUUID();
    const from = await readPrimaryOn(pool, userId, identityId);
    if (!from) return [404, { title: "No such user or identity" }];
    const headers = { "X-Operation-Id": operationId };
    try {
      await calls.unlink(from, identityId, headers);
      await calls.link(from, identityId, headers);
      await plainSaveOn(pool, userId, identityId);
      return [200, { primaryIdentityId: identityId, changed: true, operationId }];
    } catch (error) {
      return [502, { title: error instanceof Error ? error.message : String(error) }];
    }
  };
}
