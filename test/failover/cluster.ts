/**
 * The failover tier's database (`npm run test:failover`): one primary with a synchronous standby of Debian's
 * PostgreSQL 15 (`--replica sync`'s pair), started once for the run on FAILOVER_PORT_BASE (3340 unless set:
 * the nodes, the endpoint that follows the primary, the operator, then the apps' ports), and driven through
 * the launcher's operator as the app's experiments drive it. Its files run one after another.
 */
import pg from "pg";
import { inject } from "vitest";
import { applyDatabaseTimeouts, createDb } from "../../db/connection";
import { migrateToLatest } from "../../db/migrate";
import { databaseFor } from "../harness/databases";
import { startApp, type RunningApp } from "../harness/app-server";
import { startChildProvider } from "../../lib/lab/provider-process-control";
import { databaseCluster, operate as operateOn, type DatabaseCluster } from "../../lib/lab/database-nodes";

declare module "vitest" {
  export interface ProvidedContext {
    /** The endpoint that follows the primary, to the `postgres` database. */
    clusterUrl: string;
    failoverOperatorUrl: string;
    /** A server that does not fail over (the embedded one), for a third party's state. */
    thirdPartyServerUrl: string;
  }
}

export const failoverPorts = () => {
  const base = Number(process.env.FAILOVER_PORT_BASE ?? 3340);
  return { nodes: [base, base + 1] as [number, number], endpoint: base + 2, operator: base + 3, apps: base + 4 };
};

const operate = (method: "POST" | "PUT", path: string, body?: unknown) =>
  operateOn(method, path, body, inject("failoverOperatorUrl"));

export async function cluster(): Promise<DatabaseCluster> {
  const found = await databaseCluster(inject("failoverOperatorUrl"));
  if (!found) throw new Error("the failover tier's operator does not answer");
  return found;
}

const nodeWith = (state: DatabaseCluster, role: "primary" | "standby") => {
  const node = state.nodes.find((each) => each.role === role);
  if (!node) throw new Error(`no ${role} among ${JSON.stringify(state.nodes)}`);
  return node;
};

/**
 * The primary dies (SIGKILL to all its processes), the standby is promoted, and the old primary follows it
 * again (rewound). With `losing`, the standby stops receiving WAL first, and `meanwhile` runs then: what it
 * commits is on the old primary only, and is lost.
 */
export async function failover({ losing = false, meanwhile = async () => {} } = {}): Promise<{
  promoted: string;
  killed: string;
}> {
  const before = await cluster();
  const primary = nodeWith(before, "primary");
  const standby = nodeWith(before, "standby");
  if (losing) {
    await operate("PUT", "/replication/mode", { mode: "async" });
    await operate("POST", "/replication/pause");
  }
  try {
    await meanwhile();
  } finally {
    await operate("POST", `/nodes/${primary.name}/kill`);
    await operate("POST", `/nodes/${standby.name}/promote`);
    await operate("POST", `/nodes/${primary.name}/rejoin`);
    if (losing) await operate("PUT", "/replication/mode", { mode: "sync" });
  }
  return { promoted: standby.name, killed: primary.name };
}

/**
 * A fresh, migrated database `purpose` on the server that does not fail over (the embedded one): for what a third
 * party keeps (the simulated provider's state, a fence check's memory).
 */
export async function offClusterDatabase(purpose: string): Promise<string> {
  const server = new URL(inject("thirdPartyServerUrl"));
  const name = databaseFor(purpose);
  const admin = new pg.Client({ connectionString: server.toString() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
  server.pathname = `/${name}`;
  const { db } = createDb(server.toString(), 1);
  try {
    await migrateToLatest(db);
    await applyDatabaseTimeouts(db);
  } finally {
    await db.destroy();
  }
  return server.toString();
}

/**
 * The built app as `--replica` runs it, for a card's test: the provider's state off the pair (a promotion loses
 * none of its writes), the app told where the operator is, on the tier's app port `+ offset`.
 */
export async function startCardApp(purpose: string, offset: number): Promise<RunningApp> {
  const stateUrl = await offClusterDatabase(purpose);
  const provider = await startChildProvider(inject("databaseUrl"), stateUrl);
  return startApp({
    databaseUrl: inject("databaseUrl"),
    port: failoverPorts().apps + offset,
    env: {
      IDP_BASE_URL: provider,
      PROVIDER_DATABASE_URL: stateUrl,
      LAB_DATABASE_OPERATOR_URL: inject("failoverOperatorUrl"),
    },
  });
}
