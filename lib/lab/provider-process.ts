/**
 * The simulated provider's process as the lab runs it: `node --import tsx lib/lab/provider-process.ts`,
 * with DATABASE_URL (where its `idp` state and the lab's settings are) and IDP_PORT (0: any free port). The
 * simulator's knobs are the `provider` part of the lab's settings, its script taken one outcome at a time.
 * It prints one line, `${readyLine} <base URL>`, once it answers. It stops on SIGTERM or SIGINT and, when
 * started with `PROVIDER_EXIT_WITH_PARENT`, when its standard input closes: its parent ended, however it ended.
 */
import { kyselyOn } from "../../db/connection";
import type { Database } from "../../db/schema";
import { startProviderServer } from "../provider-sim/server";
import { readyLine } from "./provider-process-control";
import { hearLabSettings, labSettings } from "./settings-snapshot";
import { takeScriptedOutcome } from "./settings-store";

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error("the provider needs DATABASE_URL");
const provider = await startProviderServer(databaseUrl, Number(process.env.IDP_PORT ?? 0), (pool) => {
  const labTables = kyselyOn<Database>(pool);
  // The knobs as last announced: a simulated call reads no settings row.
  hearLabSettings(labTables, () => {});
  return {
    settings: async () => (await labSettings(labTables)).provider,
    takeScriptedOutcome: (endpoint) => takeScriptedOutcome(labTables, endpoint),
  };
});
console.log(`${readyLine} ${provider.baseUrl}`);

const stop = () => void provider.close().finally(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
if (process.env.PROVIDER_EXIT_WITH_PARENT) {
  process.stdin.on("end", stop);
  process.stdin.resume();
}
