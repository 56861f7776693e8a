/**
 * `bare` of `npm run bench`: the machine's floor for a switch with the lease's guarantees: the least switch
 * (bare-switch.ts) behind a bare `node:http` server.
 * Started as `node --import tsx bench/bare-server.ts` with DATABASE_URL, IDP_BASE_URL, BENCH_SERVER_PORT and
 * DB_POOL_SIZE; tells its parent (an IPC message) once it listens.
 */
import http from "node:http";
import pg from "pg";
import { bareSwitch, type BareAnswer } from "./bare-switch";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 16) });
const promote = bareSwitch(pool, process.env.IDP_BASE_URL ?? "");

const route = /^\/api\/users\/([^/]+)\/primary$/;
const server = http.createServer((request, response) => {
  const answer = ([status, body]: BareAnswer) =>
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
