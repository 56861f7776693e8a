/**
 * The lab's crash with a provider call in flight (`faults.crash: "during-link"`): the process dies as soon
 * as its link call has been sent, while the provider works on it. Its connection closes, as a killed
 * process's does, and it sends nothing more (no retry, no answer awaited); the operation stops dead as at
 * the other crash points (no `finally`, no release, no renewal). The call goes on at the provider, which
 * applies what it has received: the late write after a crash that the journal and the reconciler exist for.
 */
import diagnostics from "node:diagnostics_channel";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { config } from "../core/config";
import { plainFetch } from "../core/plain-fetch";
import { WorkCrashed } from "../lease/testing";
import { identityProviderClient, type IdentityProviderClient } from "../provider/client";
import { fetchStampingSentAt } from "../provider-sim/call-timing";
import type { LabSettings } from "./settings-schema";
import { takeCrash } from "./settings-store";

/** The crash of a process with one request at the provider, the one it had sent. */
export class DiedDuringCall extends WorkCrashed {
  readonly attempts = 1;
}

/** How long to wait at most for the request to leave: past it, the process dies all the same. */
const sendingLimitMs = 5_000;

/**
 * Resolves once the request of `operationId` with `method` has been written to its connection (undici's
 * diagnostics channel, which Node's fetch publishes): over loopback, what was written reaches the provider
 * even if the writer dies right after.
 */
function requestWritten(operationId: string, method: string): Promise<void> {
  return new Promise((resolve) => {
    const sent = (message: unknown) => {
      const { request } = message as { request: { method: string; headers: string[] | string } };
      const headers = Array.isArray(request.headers) ? request.headers.join("\n") : request.headers;
      if (request.method !== method || !headers.includes(operationId)) return;
      done();
    };
    const done = () => {
      clearTimeout(timer);
      diagnostics.unsubscribe("undici:request:bodySent", sent);
      resolve();
    };
    const timer = setTimeout(done, sendingLimitMs);
    diagnostics.subscribe("undici:request:bodySent", sent);
  });
}

/** `provider`, whose next link call (once, across instances) dies with its request at the provider, when armed. */
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
      const written = requestWritten(context.operationId, "POST");
      void call.linkAccount(primaryId, secondaryId, context).catch(() => undefined);
      await written;
      // It dies the moment its request is out: the provider has it, and answers only after its latency.
      await new Promise((resolve) => setImmediate(resolve));
      dying.abort();
      throw new DiedDuringCall("crashed during its link call (lab fault): the call was at the provider");
    },
  };
}
