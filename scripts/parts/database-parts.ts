/**
 * The replicated database a launch asks for (`--replica async|sync`, `--ha`), started before anything that
 * uses the database (its migrations, the provider, the app), and what the app instances are told of it: the
 * address that follows the primary, and the operator's (database-operator.ts).
 */
import type { DatabaseCluster, ReplicationMode } from "./database-cluster";
import { databaseOperatorPort, startDatabaseOperator } from "./database-operator";
import { startPatroniCluster } from "./patroni";
import { findProgram } from "./part-process";
import { postgresProgram } from "./postgres-node";
import { startReplicaPair } from "./replica";
import { onNode } from "./database-cluster";

export interface DatabaseAsked {
  replica: ReplicationMode | null;
  ha: boolean;
}

export interface StartedDatabase {
  /** `database` on the cluster, through the address that follows the primary. */
  url: string;
  appEnv: { LAB_DATABASE_OPERATOR_URL: string };
  cluster: DatabaseCluster;
  stop(): Promise<void>;
}

/** Every program the shape needs is installed, or PartNotInstalled for the first that is not. */
export function checkDatabaseInstalled(asked: DatabaseAsked): void {
  if (!asked.replica && !asked.ha) return;
  for (const program of ["initdb", "postgres", "pg_basebackup", "pg_rewind", "pg_ctl"] as const)
    postgresProgram(program);
  if (!asked.ha) return;
  findProgram("patroni", "patroni");
  findProgram("etcd", "etcd-server");
  findProgram("haproxy", "haproxy");
}

export async function startDatabase(asked: DatabaseAsked, database: string): Promise<StartedDatabase | null> {
  if (asked.replica && asked.ha) throw new Error("--replica and --ha are two shapes: choose one");
  if (!asked.replica && !asked.ha) return null;
  const cluster = asked.ha ? await startPatroniCluster() : await startReplicaPair(asked.replica!);
  try {
    const exists = await onNode(cluster.url("postgres"), "SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (exists.length === 0)
      await onNode(cluster.url("postgres"), `CREATE DATABASE "${database.replaceAll('"', '""')}"`);
    const operator = await startDatabaseOperator(cluster);
    const port = databaseOperatorPort();
    return {
      url: cluster.url(database),
      appEnv: { LAB_DATABASE_OPERATOR_URL: `http://127.0.0.1:${port}` },
      cluster,
      async stop() {
        await new Promise((resolve) => operator.close(resolve));
        await cluster.stop();
      },
    };
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}
