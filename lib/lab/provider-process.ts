/**
 * The simulated provider's process as the lab runs it: `node --import tsx lib/lab/provider-process.ts`, with
 * DATABASE_URL (the lab's database, where its settings are), PROVIDER_DATABASE_URL (where its `idp` state is;
 * the lab's database unless set) and IDP_PORT (0: any free port). The simulator's knobs are the `provider` part
 * of the lab's settings, its script taken one outcome at a time. It prints one line, `${readyLine} <base URL>`,
 * once it answers. It stops on SIGTERM or SIGINT and, when started with `PROVIDER_EXIT_WITH_PARENT`, when its
 * standard input closes: its parent ended, however it ended.
 *
 * Under a replicated database (`--replica`, `--ha`) its state is on a server of its own, as a third party's is:
 * a failover of the lab's database loses none of the provider's writes. Its knobs still come from the lab's
 * database: while that one cannot be reached (a promotion), it plays on with the knobs it last had.
 */
import type { Kysely } from "kysely";
import { createDb, kyselyOn } from "../../db/connection";
import type { Database } from "../../db/schema";
import type { ChaosSource } from "../provider-sim/call-draw";
import { startProviderServer } from "../provider-sim/server";
import { readyLine, sourceDigest } from "./provider-process-control";
import { relayProviderCalls } from "./provider-call-relay";
import { hearLabSettings, labSettings, labSettingsAsHeard } from "./settings-snapshot";
import { takeScriptedOutcome } from "./settings-store";

const labUrl = process.env.DATABASE_URL;
if (!labUrl) throw new Error("the provider needs DATABASE_URL");
const stateUrl = process.env.PROVIDER_DATABASE_URL || labUrl;

/** The knobs as last announced (a simulated call reads no settings row), or as last had. */
function knobsOn(labTables: Kysely<Database>): ChaosSource {
  hearLabSettings(labTables, () => {});
  let last: Awaited<ReturnType<ChaosSource["settings"]>> | null = null;
  return {
    settings: async () => {
      try {
        return (last = (await labSettings(labTables)).provider);
      } catch (error) {
        if (!last) throw error;
        return last;
      }
    },
    knobsAsHeard: async () => {
      const { settings, revision } = await labSettingsAsHeard(labTables);
      return { knobs: settings.provider, revision: revision === null ? null : String(revision) };
    },
    takeScriptedOutcome: (endpoint) =>
      takeScriptedOutcome(labTables, endpoint).catch((error: unknown) => {
        console.error(`[provider] could not take a scripted ${endpoint} outcome, none is played:`, error);
        return null;
      }),
  };
}

const ownState = stateUrl !== labUrl;
// Its calls' notifications come from its own database: the lab's stream hears them through the lab's, from
// before its first call.
const relay = ownState ? await relayProviderCalls(stateUrl, labUrl) : null;
const provider = await startProviderServer(
  stateUrl,
  Number(process.env.IDP_PORT ?? 0),
  (pool) => knobsOn(ownState ? createDb<Database>(labUrl, 3).db : kyselyOn<Database>(pool)),
  sourceDigest(),
);
console.log(`${readyLine} ${provider.baseUrl}`);

// The provider first: the calls its closing cuts short are logged, and relayed, before the relay stops.
const stop = () =>
  void provider
    .close()
    .catch(() => undefined)
    .then(() => relay?.stop())
    .finally(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
if (process.env.PROVIDER_EXIT_WITH_PARENT) {
  process.stdin.on("end", stop);
  process.stdin.resume();
}
