/**
 * The database's address under `--replica`: a TCP forwarder on DB_BALANCER_PORT that sends every new
 * connection to the node that says it is the primary, as a managed database's endpoint (a DNS name moved
 * at failover) does. Which node that is, it asks every 200 ms (`pg_is_in_recovery()` on a connection of
 * its own to each). When another node becomes the primary, the connections to the one before are cut, as
 * HAProxy's `on-marked-down shutdown-sessions` does under `--ha`. With no primary, a connection is closed
 * at once: the app answers 503 until there is one again.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";
import pg from "pg";

export interface EndpointNode {
  name: string;
  port: number;
  url: string;
}

export interface RunningEndpoint {
  port: number;
  /** The node connections go to now, or null while none says it is primary. */
  primary(): EndpointNode | null;
  stop(): Promise<void>;
}

const pollEveryMs = 200;

/** A node's role as its own connection sees it: the timeline breaks a tie between two that say primary. */
interface Seen {
  client: pg.Client | null;
  primary: boolean;
  timeline: number;
}

export async function startDbEndpoint(port: number, nodes: EndpointNode[]): Promise<RunningEndpoint> {
  const seen = new Map<string, Seen>(nodes.map((node) => [node.name, { client: null, primary: false, timeline: 0 }]));
  const open = new Map<Socket, string>();
  let current: EndpointNode | null = null;
  let stopping = false;

  const poll = async (node: EndpointNode) => {
    const state = seen.get(node.name)!;
    try {
      if (!state.client) {
        const client = new pg.Client({
          connectionString: node.url,
          connectionTimeoutMillis: 500,
          application_name: "lab:db-endpoint",
        });
        client.on("error", () => undefined);
        await client.connect();
        state.client = client;
      }
      const { rows } = await state.client.query<{ primary: boolean; timeline: number | null }>(
        `SELECT NOT pg_is_in_recovery() AS primary, CASE WHEN pg_is_in_recovery() THEN NULL
                ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint END AS timeline`,
      );
      Object.assign(state, { primary: rows[0]!.primary, timeline: Number(rows[0]!.timeline ?? 0) });
    } catch {
      await state.client?.end().catch(() => undefined);
      Object.assign(state, { client: null, primary: false, timeline: 0 });
    }
  };

  const choose = () => {
    const primaries = nodes.filter((node) => seen.get(node.name)!.primary);
    primaries.sort((a, b) => seen.get(b.name)!.timeline - seen.get(a.name)!.timeline);
    const next = primaries[0] ?? null;
    if (next?.name === current?.name) return;
    // Another primary: the connections to the one before are cut (it may be alive, on an older timeline).
    // No primary (it stopped answering): its connections end with it, or go on if it was only slow to answer.
    if (next && current) {
      console.log(`[db-endpoint] ${current.name} is no longer the primary: its connections are cut`);
      for (const [socket, name] of open) if (name !== next.name) socket.destroy();
    }
    current = next;
    if (next) console.log(`[db-endpoint] new connections go to ${next.name} (port ${next.port})`);
  };

  const loop = async () => {
    while (!stopping) {
      await Promise.all(nodes.map(poll));
      choose();
      await new Promise((resolve) => setTimeout(resolve, pollEveryMs).unref());
    }
  };

  const server: Server = createServer((client) => {
    const target = current;
    if (!target) return void client.destroy();
    const upstream = createConnection({ host: "127.0.0.1", port: target.port });
    open.set(client, target.name);
    const close = () => {
      open.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", close).on("close", close);
    upstream.on("error", close).on("close", close);
    client.pipe(upstream).pipe(client);
  });
  await Promise.all(nodes.map(poll));
  choose();
  void loop();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return {
    port,
    primary: () => current,
    async stop() {
      stopping = true;
      for (const socket of open.keys()) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
      await Promise.all([...seen.values()].map((state) => state.client?.end().catch(() => undefined)));
    },
  };
}
