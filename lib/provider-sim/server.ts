/**
 * The simulated provider as a server of its own: a `node:http` server whose every request is answered by
 * the MSW handlers (msw's `getResponse`, no interception), over loopback, as a real provider answers over
 * the network. It has a pool of its own, as a real one has its own database: an app exhausting its pool
 * must not stall the provider. It seeds its accounts when its tables are empty.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { getResponse } from "msw";
import type pg from "pg";
import { createDb } from "../../db/connection";
import { seedProviderAccounts } from "../../db/seed-data";
import { arrivedAtHeader, machineNow } from "./call-timing";
import type { ChaosSource } from "./call-draw";
import { simulatedProviderHandlers } from "./handlers";
import { databaseOf, providerApplicationName, providerService } from "./health";
import type { IdpDatabase } from "./schema";
import { seedIfEmpty } from "./store";

/** The handlers match on paths: every request is routed under this one origin, whatever port it came to. */
const routedOrigin = "http://idp";

export interface ProviderServer {
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * The provider on `port` (0: any free one), its state in `databaseUrl`'s `idp` schema; its knobs from
 * `chaosSourceOn`, given the provider's own pool (the lab reads its settings from the same database). `code`: the
 * digest of the code it runs, for its health.
 */
export async function startProviderServer(
  databaseUrl: string,
  port: number,
  chaosSourceOn: (pool: pg.Pool) => ChaosSource,
  code: string,
): Promise<ProviderServer> {
  const { db, pool } = createDb<IdpDatabase>(databaseUrl, 10, { applicationName: providerApplicationName });
  const handlers = simulatedProviderHandlers(routedOrigin, db, chaosSourceOn(pool), {
    service: providerService,
    database: databaseOf(databaseUrl),
    pid: process.pid,
    code,
  });

  const server = createServer((incoming, outgoing) => {
    answer(handlers, incoming, outgoing).catch((error: unknown) => {
      console.error("[provider] a call failed:", error);
      outgoing.destroy();
    });
  });
  // Longer than any client keeps an idle connection, so the client is always the one to close it (a server
  // closing a kept-alive connection as the client reuses it would fail that call for no lab reason).
  server.keepAliveTimeout = 65_000;
  // Seeded before it answers. Without its database the provider still answers; its accounts are seeded by
  // the next lab reset.
  await seedIfEmpty(db, seedProviderAccounts()).catch((error: unknown) =>
    console.error("[provider] could not seed its accounts:", error instanceof Error ? error.message : error),
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await db.destroy();
    },
  };
}

type Handlers = ReturnType<typeof simulatedProviderHandlers>;

async function answer(handlers: Handlers, incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> {
  const arrivedAt = machineNow();
  // The caller leaving (its abort, or its process dying) closes the connection: the handlers hear it as
  // their request's signal, as they would a real caller's.
  const callerLeft = new AbortController();
  outgoing.on("close", () => {
    if (!outgoing.writableFinished) callerLeft.abort();
  });
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  const method = incoming.method ?? "GET";
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers))
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  headers.set(arrivedAtHeader, String(arrivedAt));
  const request = new Request(`${routedOrigin}${incoming.url ?? "/"}`, {
    method,
    headers,
    body: method === "GET" || method === "HEAD" || chunks.length === 0 ? undefined : Buffer.concat(chunks),
    signal: callerLeft.signal,
  });
  const response = await getResponse(handlers, request);
  if (outgoing.destroyed) return;
  // `HttpResponse.error()`: no HTTP answer at all, the connection reset.
  if (response?.type === "error") return void outgoing.socket?.resetAndDestroy();
  if (!response) {
    const body = { statusCode: 404, error: "Not Found", message: "Not found", errorCode: "inexistent_route" };
    outgoing.writeHead(404, { "Content-Type": "application/json" }).end(JSON.stringify(body));
    return;
  }
  const body = Buffer.from(await response.arrayBuffer());
  outgoing.writeHead(response.status, Object.fromEntries(response.headers)).end(body);
}
