/**
 * `bare` of `npm run bench`: the machine's floor for a switch with the lease's guarantees. A bare `node:http`
 * server, raw pg, and the least a switch can send (bare-statements.ts) around the unlink and the link. The two
 * provider calls go through the product's transport (lib/provider/http-json.ts), stamped as the app's are. No
 * session, no lab, no recovery of leftovers, no reconciler: what a switch cannot do without.
 * Started as `node --import tsx bench/bare-server.ts` with DATABASE_URL, IDP_BASE_URL, BENCH_SERVER_PORT and
 * DB_POOL_SIZE; tells its parent (an IPC message) once it listens.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import pg from "pg";
import { splitIdentityId } from "../db/schema";
import { requestJson } from "../lib/provider/http-json";
import { sentAtStamp } from "../lib/provider-sim/call-timing";
import { acquireWithIntentOn, markUnlinkedOn, releaseOn, saveAndReleaseOn, type Holder } from "./bare-statements";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 16) });
const providerUrl = process.env.IDP_BASE_URL ?? "";

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
    await providerCall("POST", `/api/v2/users/${encodeURIComponent(identityId)}/identities`, holder, operationId, body);
    if (!(await saveAndReleaseOn(pool, userId, holder, identityId)))
      return [409, { title: "The lease was lost before the save" }];
    return [200, { primaryIdentityId: identityId, changed: true, operationId }];
  } catch (error) {
    await releaseOn(pool, userId, holder);
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
