/**
 * The simulated provider's process: `node --import tsx lib/provider-sim/provider-process.ts`, with
 * DATABASE_URL (where its `idp` state and the lab's settings are) and IDP_PORT (0: any free port). It prints
 * one line, `${readyLine} <base URL>`, once it answers. It stops on SIGTERM or SIGINT and, when started with
 * `PROVIDER_EXIT_WITH_PARENT`, when its standard input closes: its parent ended, however it ended.
 */
import { readyLine } from "./process-control";
import { startProviderServer } from "./server";

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error("the provider needs DATABASE_URL");
const provider = await startProviderServer(databaseUrl, Number(process.env.IDP_PORT ?? 0));
console.log(`${readyLine} ${provider.baseUrl}`);

const stop = () => void provider.close().finally(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
if (process.env.PROVIDER_EXIT_WITH_PARENT) {
  process.stdin.on("end", stop);
  process.stdin.resume();
}
