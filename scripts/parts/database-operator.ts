/**
 * The lab's hand on the replicated database: a loopback HTTP API on DB_OPERATOR_PORT (6449 unless set),
 * served by the launcher, through which the app's failover experiments kill a node, promote a standby,
 * pause replication and bring a node back, as an operator (or the machine's fate) would. The app is told
 * its address as LAB_DATABASE_OPERATOR_URL.
 *
 *   GET  /cluster                      { shape, mode, nodes: [{ name, url, role }], events }
 *   POST /nodes/{name}/kill            SIGKILL to every process of the node
 *   POST /nodes/{name}/promote         `--replica`: pg_ctl promote
 *   POST /nodes/{name}/rejoin          the node follows the current primary again
 *   POST /replication/pause, /resume   `--replica`: the standby stops (or starts again) receiving WAL
 *   PUT  /replication/mode { mode }    `--replica`: "sync" or "async"
 *
 * Each answers 200 with the cluster as GET /cluster does, or 400/404/409 with `{ error }`.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { DatabaseCluster, ReplicationMode } from "./database-cluster";

export const databaseOperatorPort = (): number => Number(process.env.DB_OPERATOR_PORT ?? 6449);

type Route = (cluster: DatabaseCluster, name: string, body: unknown) => Promise<unknown>;

const routes: Record<string, Route> = {
  "POST /nodes/:name/kill": (cluster, name) => cluster.kill(name),
  "POST /nodes/:name/promote": (cluster, name) => cluster.promote(name),
  "POST /nodes/:name/rejoin": (cluster, name) => cluster.rejoin(name),
  "POST /replication/pause": (cluster) => cluster.pauseReplication(),
  "POST /replication/resume": (cluster) => cluster.resumeReplication(),
  "PUT /replication/mode": (cluster, _name, body) => {
    const mode = (body as { mode?: unknown } | null)?.mode;
    if (mode !== "sync" && mode !== "async") throw new BadRequest('mode must be "sync" or "async"');
    return cluster.setMode(mode as ReplicationMode);
  },
};

class BadRequest extends Error {}

async function clusterView(cluster: DatabaseCluster) {
  return { shape: cluster.shape, mode: cluster.mode(), nodes: await cluster.nodes(), events: cluster.events() };
}

async function bodyOf(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return null;
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new BadRequest("the body is not JSON");
  }
}

/** Finds the route for `method path`: the node's name is the path's third part where the route has `:name`. */
function routeFor(method: string, path: string): { route: Route; name: string } | null {
  const parts = path.split("/");
  for (const [key, route] of Object.entries(routes)) {
    const [routeMethod, routePath] = key.split(" ") as [string, string];
    const routeParts = routePath.split("/");
    if (routeMethod !== method || routeParts.length !== parts.length) continue;
    if (routeParts.every((part, index) => part === ":name" || part === parts[index]))
      return { route, name: decodeURIComponent(parts[routeParts.indexOf(":name")] ?? "") };
  }
  return null;
}

export async function startDatabaseOperator(cluster: DatabaseCluster, port = databaseOperatorPort()): Promise<Server> {
  const server = createServer((request, response) => {
    const answer = (status: number, body: unknown) =>
      response.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
    void (async () => {
      const path = new URL(request.url ?? "/", "http://operator").pathname;
      if (request.method === "GET" && path === "/cluster") return answer(200, await clusterView(cluster));
      const found = routeFor(request.method ?? "GET", path);
      if (!found) return answer(404, { error: `no such operation: ${request.method} ${path}` });
      try {
        await found.route(cluster, found.name, await bodyOf(request));
        answer(200, await clusterView(cluster));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        answer(error instanceof BadRequest ? 400 : /^no database node/.test(message) ? 404 : 409, { error: message });
      }
    })().catch((error: unknown) => answer(500, { error: String(error) }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return server;
}
