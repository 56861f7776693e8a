/**
 * `bare` of `npm run bench`: the machine's floor for a switch with the lease's guarantees. A bare `node:http`
 * server, raw pg (named statements), and the least a switch can send:
 * 1. acquire with intent, one CTE: the identity is the user's, the lease taken (free or expired), and the
 *    journal's intent written before any provider call, in one durable commit;
 * 2. the unlink at the provider, then the journal's `unlinked`, owner-checked: what recovery needs to know
 *    between the two calls;
 * 3. the link at the provider, then `linked` + save + `done` + release in one fenced statement: the save
 *    only while the lease is this holder's and unexpired, and the journal closed only if it saved.
 * The two provider calls go through the product's transport (lib/provider/http-json.ts), stamped as the
 * app's are. No session, no lab, no recovery of leftovers, no reconciler: what a switch cannot do without.
 * Started as `node --import tsx bench/bare-server.ts` with DATABASE_URL, IDP_BASE_URL, BENCH_SERVER_PORT and
 * DB_POOL_SIZE; tells its parent (an IPC message) once it listens.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import pg from "pg";
import { splitIdentityId } from "../db/schema";
import { requestJson } from "../lib/provider/http-json";
import { sentAtStamp } from "../lib/provider-sim/call-timing";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 16) });
const providerUrl = process.env.IDP_BASE_URL ?? "";
const ttlSeconds = 10;
/** As the product records it: a call may land up to the provider's apply limit (10 s) past the lease's expiry. */
const inFlightSeconds = 10;

const acquireWithIntent = `
  WITH acquired AS (
    UPDATE users
       SET identity_action_locked_at = now(), identity_action_locked_until = now() + make_interval(secs => $3),
           identity_action_lock_token = gen_random_uuid(), identity_action_fence = identity_action_fence + 1
     WHERE id = $1 AND (identity_action_locked_until IS NULL OR identity_action_locked_until < now())
       AND EXISTS (SELECT 1 FROM identities WHERE user_id = $1 AND id = $2)
    RETURNING primary_identity_id, identity_action_lock_token::text AS token, identity_action_fence AS fence,
              identity_action_locked_until AS until
  ), intent AS (
    INSERT INTO switch_journal (user_id, operation_id, fence, from_identity_id, to_identity_id, step, in_flight_until)
    SELECT $1, $4::uuid, fence, primary_identity_id, $2, 'acquired', until + make_interval(secs => $5) FROM acquired
    RETURNING id::text
  )
  SELECT acquired.primary_identity_id, acquired.token, acquired.fence::text, intent.id AS entry FROM acquired, intent`;

const held = `EXISTS (SELECT 1 FROM users WHERE id = $2 AND identity_action_lock_token = $3::uuid
                                           AND identity_action_locked_until > now())`;
const unlinked = `UPDATE switch_journal SET step = 'unlinked', updated_at = now()
                   WHERE id = $1 AND step <> 'resolved' AND ${held}`;
const saveAndRelease = `
  WITH saved AS (
    UPDATE users
       SET primary_identity_id = $4, version = version + 1,
           identity_action_locked_at = NULL, identity_action_locked_until = NULL, identity_action_lock_token = NULL
     WHERE id = $2 AND identity_action_lock_token = $3::uuid AND identity_action_locked_until > now()
    RETURNING id
  )
  UPDATE switch_journal SET step = 'done', updated_at = now(), in_flight_until = NULL
   WHERE id = $1 AND step <> 'resolved' AND EXISTS (SELECT 1 FROM saved)`;
const release = `UPDATE users SET identity_action_locked_at = NULL, identity_action_locked_until = NULL,
                                  identity_action_lock_token = NULL
                  WHERE id = $1 AND identity_action_lock_token = $2::uuid`;

interface Holder {
  primary_identity_id: string;
  token: string;
  fence: string;
  entry: string;
}

async function providerCall(method: string, path: string, holder: Holder, operationId: string, body?: unknown) {
  const headers = { "X-Operation-Id": operationId, "X-Fencing-Token": holder.fence, ...sentAtStamp() };
  const answer = await requestJson(`${providerUrl}${path}`, {
    method,
    headers,
    body,
    signal: AbortSignal.timeout(10_000),
  });
  if (answer.status < 200 || answer.status > 299) throw new Error(`the provider answered ${answer.status} to ${path}`);
}

/** The switch: 200 with the new primary, 409 while another holds the lease (or the identity is not the user's). */
async function promote(userId: string, identityId: string): Promise<[number, unknown]> {
  const operationId = randomUUID();
  const values = [userId, identityId, ttlSeconds, operationId, inFlightSeconds];
  const { rows } = await pool.query<Holder>({ name: "bare_acquire", text: acquireWithIntent, values });
  const holder = rows[0];
  if (!holder) return [409, { title: "Another operation is already in progress, or no such identity" }];
  const from = holder.primary_identity_id;
  const owner = [holder.entry, userId, holder.token];
  try {
    const target = splitIdentityId(identityId);
    const base = `/api/v2/users/${encodeURIComponent(from)}/identities`;
    await providerCall(
      "DELETE",
      `${base}/${target.provider}/${encodeURIComponent(target.providerUserId)}`,
      holder,
      operationId,
    );
    await pool.query({ name: "bare_unlinked", text: unlinked, values: owner });
    const old = splitIdentityId(from);
    const body = { provider: old.provider, user_id: old.providerUserId };
    await providerCall("POST", `/api/v2/users/${encodeURIComponent(identityId)}/identities`, holder, operationId, body);
    const saved = await pool.query({ name: "bare_save", text: saveAndRelease, values: [...owner, identityId] });
    if (saved.rowCount !== 1) return [409, { title: "The lease was lost before the save" }];
    return [200, { primaryIdentityId: identityId, changed: true, operationId }];
  } catch (error) {
    await pool.query({ name: "bare_release", text: release, values: [userId, holder.token] });
    return [502, { title: error instanceof Error ? error.message : String(error) }];
  }
}

const route = /^\/api\/users\/([^/]+)\/primary$/;
const server = http.createServer((request, response) => {
  const answer = ([status, body]: [number, unknown]) =>
    response.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
  const match = route.exec(request.url ?? "");
  if (request.method !== "POST" || !match) return answer([404, { title: "Not found" }]);
  let text = "";
  request.setEncoding("utf8");
  request.on("data", (chunk: string) => (text += chunk));
  request.on("end", () => {
    const identityId = (JSON.parse(text) as { identityId?: unknown }).identityId;
    if (typeof identityId !== "string") return answer([400, { title: "identityId is required" }]);
    promote(decodeURIComponent(match[1]!), identityId).then(answer, (error: unknown) =>
      answer([500, { title: String(error) }]),
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.BENCH_SERVER_PORT), "127.0.0.1", () => process.send?.("listening"));
process.on("SIGTERM", () => server.close(() => void pool.end().then(() => process.exit(0))));
