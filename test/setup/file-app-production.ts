/**
 * Set-up of the `production` project (after `file-database.ts`), in place of `file-app.ts`: the file's app in
 * the production shape, two instances behind HAProxy, both pools through PgBouncer in transaction pooling,
 * as `npm run dev -- --instances 2 --balance --pgbouncer` runs it. `inject("appUrl")` answers the balancer's
 * URL, so consecutive requests of a test land on alternate instances; `inject("instanceUrl")` the first
 * instance's, for a test that watches one instance.
 */
import { afterAll, inject } from "vitest";
import { startPgBouncer } from "../../scripts/parts/pgbouncer";
import { startBalancedPair } from "../harness/balanced-pair";
import { usePorts, workerPorts } from "../harness/ports";
import { provideToFile } from "./provide-to-file";

const ports = workerPorts("vitest", Number(process.env.VITEST_POOL_ID) - 1);
usePorts(ports);
const pgbouncer = await startPgBouncer(inject("databaseUrl"), ports.PGBOUNCER_PORT);
// Registered before the file's own hooks, so they run after them (the file may still use the apps), and each
// as soon as its part runs, so that a failed start stops what did start.
afterAll(() => pgbouncer.stop());
const pair = await startBalancedPair({
  databaseUrl: inject("databaseUrl"),
  balancerPort: ports.BALANCER_PORT,
  pgbouncer,
});
afterAll(() => pair.stop());
provideToFile("appUrl", pair.balancerUrl);
provideToFile("instanceUrl", pair.apps[0]!.baseUrl);
