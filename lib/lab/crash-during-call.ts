/**
 * The lab's crash with a provider call in flight (`faults.crash: "during-link"`): the process dies while its
 * link call is at the provider. Its connection closes, as a killed process's does, and it sends nothing more
 * (no retry, no answer awaited); the operation stops dead as at the other crash points (no `finally`, no
 * release, no renewal). The call goes on at the provider, which applies what it has received: the late write
 * after a crash that the journal and the reconciler exist for.
 */
import { setTimeout as pause } from "node:timers/promises";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { config } from "../core/config";
import { plainFetch } from "../core/plain-fetch";
import { WorkCrashed } from "../lease/testing";
import { identityProviderClient, type IdentityProviderClient } from "../provider/client";
import { effectiveChaos } from "../provider-sim/chaos-settings";
import { fetchStampingSentAt } from "../provider-sim/call-timing";
import type { LabSettings } from "./settings-schema";
import { takeCrash } from "./settings-store";

/** The crash of a process with one request at the provider, the one it had sent. */
export class DiedDuringCall extends WorkCrashed {
  readonly attempts = 1;
}

/**
 * When the process dies: half-way through the link's latency, so that the request has reached the provider
 * (over loopback, well within it) and is still being processed there.
 */
const diesAfterMs = (settings: LabSettings): number =>
  Math.max(20, Math.round(effectiveChaos(settings.provider, "link").latencyMs / 2));

/** `provider`, whose next link call (once, across instances) dies with its request at the provider when the fault is armed. */
export function crashingDuringLink(
  provider: IdentityProviderClient,
  db: Kysely<Database>,
  settings: LabSettings,
): IdentityProviderClient {
  if (settings.faults.crash !== "during-link") return provider;
  return {
    ...provider,
    async linkAccount(primaryId, secondaryId, context) {
      if ((await takeCrash(db)) !== "during-link") return provider.linkAccount(primaryId, secondaryId, context);
      const dying = new AbortController();
      const send = config.simulateProvider ? fetchStampingSentAt : plainFetch;
      // Once dead, it sends nothing more: a retry of the call would be a request of a live process.
      const fetchUntilDeath: typeof fetch = (input, init) =>
        dying.signal.aborted
          ? Promise.reject(new Error("the process is dead"))
          : send(input, {
              ...init,
              signal: init?.signal ? AbortSignal.any([init.signal, dying.signal]) : dying.signal,
            });
      const call = identityProviderClient(config.identityProviderBaseUrl, fetchUntilDeath);
      void call.linkAccount(primaryId, secondaryId, context).catch(() => undefined);
      await pause(diesAfterMs(settings));
      dying.abort();
      throw new DiedDuringCall("crashed during its link call (lab fault): the call was at the provider");
    },
  };
}
