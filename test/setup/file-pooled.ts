/**
 * Set-up of the `lease-pooled` project (after `file-database.ts`): the file's database reached through a
 * PgBouncer of its own in transaction pooling, as behind `npm run dev -- --pgbouncer` or a managed
 * database's pooled URL. From here on `inject("databaseUrl")` answers the pooled URL, and the file's pools
 * send their statements unnamed (PgBouncer 1.18 keeps no prepared statements in transaction mode).
 */
import { afterAll, inject } from "vitest";
import { startPgBouncer } from "../../scripts/parts/pgbouncer";
import { workerPorts } from "../harness/ports";
import { provideToFile } from "./provide-to-file";

const { PGBOUNCER_PORT } = workerPorts("vitest", Number(process.env.VITEST_POOL_ID) - 1);
const pgbouncer = await startPgBouncer(inject("databaseUrl"), PGBOUNCER_PORT);
afterAll(() => pgbouncer.stop());
provideToFile("databaseUrl", pgbouncer.pooledUrl(inject("databaseUrl")));
provideToFile("namedStatements", false);
