/**
 * Set-up of every file that talks to the app (after `file-database.ts`): the built app started on the file's
 * database, on this worker's port, stopped after the file. `inject("appUrl")` answers its URL. The worker's
 * other ports (`PEER_APP_PORT`, `CRASH_APP_PORT`, …) go into `process.env` for the apps the file starts itself.
 */
import { afterAll, inject } from "vitest";
import { startApp } from "../harness/app-server";
import { usePorts, workerPorts } from "../harness/ports";
import { provideToFile } from "./provide-to-file";

// VITEST_POOL_ID numbers the workers running at once from 1: files in one worker run one after another.
const ports = workerPorts("vitest", Number(process.env.VITEST_POOL_ID) - 1);
usePorts(ports);
const app = await startApp({ databaseUrl: inject("databaseUrl"), port: ports.TEST_APP_PORT });
// Registered before the file's own hooks, so it runs after them: they may still use the app.
afterAll(() => app.stop());
provideToFile("appUrl", app.baseUrl);
provideToFile("instanceUrl", app.baseUrl);
