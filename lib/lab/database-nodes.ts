/**
 * The replicated database's nodes as the launcher's operator tells them (`--replica`, `--ha`;
 * scripts/parts/database-operator.ts), and the operations the failover experiments ask of it. Over loopback
 * HTTP: the app never starts, kills or promotes a database process itself.
 */
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
