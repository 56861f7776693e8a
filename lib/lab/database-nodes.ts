/**
 * The replicated database's nodes as the launcher's operator tells them (`--replica`, `--ha`;
 * scripts/parts/database-operator.ts), and the operations the failover experiments ask of it. Over loopback
 * HTTP: the app never starts, kills or promotes a database process itself.
 */
import { setTimeout as pause } from "node:timers/promises";
import { config } from "../core/config";
import { requestJson } from "../provider/http-json";

export type NodeRole = "primary" | "standby";

export interface DatabaseNode {
  name: string;
  /** The node itself, with the lab's credentials (never shown: see `shownUrl`). */
  url: string;
  role: NodeRole | null;
}

export interface DatabaseEvent {
  at: string;
  kind: "killed" | "promoted" | "rejoined" | "replication-paused" | "replication-resumed" | "mode-changed";
  node: string | null;
  detail: string;
}

export interface DatabaseCluster {
  shape: "replica" | "ha";
  mode: "async" | "sync";
  nodes: DatabaseNode[];
  events: DatabaseEvent[];
}

/** The cluster now, or null when the app does not run on a replicated database (or its operator is gone). */
export async function databaseCluster(operatorUrl = config.databaseOperatorUrl): Promise<DatabaseCluster | null> {
  if (!operatorUrl) return null;
  try {
    const answer = await requestJson(`${operatorUrl}/cluster`, {
      method: "GET",
      signal: AbortSignal.timeout(3_000),
    });
    return answer.status === 200 ? (answer.payload as DatabaseCluster) : null;
  } catch {
    return null;
  }
}

/**
 * When the operator saw a node other than `killed` promoted, at or after `killedAt` (Patroni's own moment);
 * null if none was within `limitMs`.
 */
export async function promotionAfter(
  killedAt: Date,
  killed: string,
  { limitMs, operatorUrl = config.databaseOperatorUrl }: { limitMs: number; operatorUrl?: string },
): Promise<{ node: string; at: Date } | null> {
  for (const limit = Date.now() + limitMs; Date.now() < limit; await pause(100)) {
    const promoted = (await databaseCluster(operatorUrl))?.events.find(
      (event) => event.kind === "promoted" && event.node !== killed && Date.parse(event.at) >= killedAt.getTime(),
    );
    if (promoted) return { node: promoted.node!, at: new Date(promoted.at) };
  }
  return null;
}

/** Asks the operator for one operation (`POST /nodes/pg1/kill`, …); the cluster after it. */
export async function operate(
  method: "POST" | "PUT",
  path: string,
  body?: unknown,
  operatorUrl = config.databaseOperatorUrl,
): Promise<DatabaseCluster> {
  if (!operatorUrl) throw new Error("this app does not run on a replicated database");
  const answer = await requestJson(`${operatorUrl}${path}`, {
    method,
    body,
    signal: AbortSignal.timeout(120_000),
  });
  const answered = answer.payload as DatabaseCluster & { error?: string };
  if (answer.status !== 200) throw new Error(`the database operator refused ${method} ${path}: ${answered?.error}`);
  return answered;
}

/** A node's address as the lab shows it: no password. */
export function shownUrl(url: string): string {
  const shown = new URL(url);
  shown.password = "";
  return shown.toString();
}
