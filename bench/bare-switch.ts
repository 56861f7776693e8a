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
import { acquireWithIntentOn, markUnlinkedOn, releaseOn, saveAndReleaseOn, type Holder } from "./bare-statements";

/** An answer's status and JSON body. */
export type BareAnswer = [number, unknown];

/**
 * The switch on `pool` and the provider at `providerUrl`: 200 with the new primary, 409 while another holds the
 * lease (or the identity is not the user's).
 */
export function bareSwitch(pool: pg.Pool, providerUrl: string) {
  async function providerCall(method: string, path: string, holder: Holder, operationId: string, body?: unknown) {
    const headers = { "X-Operation-Id": operationId, "X-Fencing-Token": holder.fence, ...sentAtStamp() };
    const answer = await requestJson(`${providerUrl}${path}`, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(10_000),
    });
    if (answer.status < 200 || answer.status > 299)
      throw new Error(`the provider answered ${answer.status} to ${path}`);
  }

  return async function promote(userId: string, identityId: string): Promise<BareAnswer> {
    const operationId = randomUUID();
    const holder = await acquireWithIntentOn(pool, userId, identityId, operationId);
    if (!holder) return [409, { title: "Another operation is already in progress, or no such identity" }];
    const from = holder.primary_identity_id;
    try {
      const target = splitIdentityId(identityId);
      const base = `/api/v2/users/${encodeURIComponent(from)}/identities`;
      await providerCall(
        "DELETE",
        `${base}/${target.provider}/${encodeURIComponent(target.providerUserId)}`,
        holder,
        operationId,
      );
      await markUnlinkedOn(pool, userId, holder);
      const old = splitIdentityId(from);
      const body = { provider: old.provider, user_id: old.providerUserId };
      await providerCall(
        "POST",
        `/api/v2/users/${encodeURIComponent(identityId)}/identities`,
        holder,
        operationId,
        body,
      );
      if (!(await saveAndReleaseOn(pool, userId, holder, identityId)))
        return [409, { title: "The lease was lost before the save" }];
      return [200, { primaryIdentityId: identityId, changed: true, operationId }];
    } catch (error) {
      await releaseOn(pool, userId, holder);
      return [502, { title: error instanceof Error ? error.message : String(error) }];
    }
  };
}
