import type { TestProject } from "vitest/node";
import { ensureDatabaseServer } from "../../db/server";
import { startDatabaseOperator } from "../../scripts/parts/database-operator";
import { startReplicaPair } from "../../scripts/parts/replica";
import { failoverPorts } from "./cluster";

/**
 * Starts the tier's pair once (see cluster.ts) and its operator; the embedded server too, found before the
 * files are pointed at the pair, for what must outlive a failover (a third party's fences).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const thirdParty = await ensureDatabaseServer();
  const ports = failoverPorts();
  const pair = await startReplicaPair("sync", { nodes: ports.nodes, endpoint: ports.endpoint });
  const operator = await startDatabaseOperator(pair, ports.operator);
  project.provide("clusterUrl", pair.url("postgres"));
  project.provide("failoverOperatorUrl", `http://127.0.0.1:${ports.operator}`);
  project.provide("thirdPartyServerUrl", thirdParty);
  return async () => {
    await new Promise((resolve) => operator.close(resolve));
    await pair.stop();
  };
}
