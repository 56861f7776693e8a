/**
 * What the replicated shapes have in common (`--replica async|sync`, `--ha`): two PostgreSQL nodes behind one
 * address that follows the primary, and the operations the lab performs on them on purpose (kill a node,
 * promote a standby, pause replication, bring a node back), each recorded as an event with its time.
 */
import pg from "pg";

export type ReplicationMode = "async" | "sync";
export type NodeRole = "primary" | "standby";

export interface DatabaseNodeView {
  name: string;
  /** The node itself (not the shared address), with the lab's credentials: for the lab's own reads. */
  url: string;
  /** What the node says it is now; null when it does not answer. */
  role: NodeRole | null;
}

export type ClusterEventKind =
  "killed" | "promoted" | "rejoined" | "replication-paused" | "replication-resumed" | "mode-changed";

export interface ClusterEvent {
  at: string;
  kind: ClusterEventKind;
  node: string | null;
  detail: string;
}

export interface DatabaseCluster {
  shape: "replica" | "ha";
  /** The address that follows the primary, for `database`. */
  url(database: string): string;
  mode(): ReplicationMode;
  nodes(): Promise<DatabaseNodeView[]>;
  events(): ClusterEvent[];
  /** SIGKILL to every process of the node (under `--ha`, its Patroni too): the machine dies. */
  kill(name: string): Promise<void>;
  /** `--replica`: ends the standby's recovery (`pg_ctl promote`). Under `--ha`, Patroni decides. */
  promote(name: string): Promise<void>;
  /** A node that died or was stopped follows the current primary again; how (rewound, cloned, restarted). */
  rejoin(name: string): Promise<string>;
  /** `--replica`: the standby stops receiving WAL (its `primary_conninfo` emptied), or receives it again. */
  pauseReplication(): Promise<void>;
  resumeReplication(): Promise<void>;
  /** `--replica`: the primary waits for the standby's apply at every commit (`sync`), or does not. */
  setMode(mode: ReplicationMode): Promise<void>;
  stop(): Promise<void>;
}

/** Runs `statement` on the node at `url` on a connection of its own. */
export async function onNode<Row extends pg.QueryResultRow = pg.QueryResultRow>(
  url: string,
  statement: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return (await client.query<Row>(statement, values)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** An event log, newest last. */
export function eventLog(): {
  events: ClusterEvent[];
  note(kind: ClusterEventKind, node: string | null, detail: string): void;
} {
  const events: ClusterEvent[] = [];
  return {
    events,
    note(kind, node, detail) {
      events.push({ at: new Date().toISOString(), kind, node, detail });
      console.log(`[database] ${detail}`);
    },
  };
}
