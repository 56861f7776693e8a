/**
 * The lab's crash with a provider call in flight (`faults.crash: "during-link"`): the process dies as soon
 * as its link call has been written to its connection, while the provider works on it. Its connection
 * closes, as a killed process's does, and it sends nothing more (no retry, no answer awaited); the operation
 * stops dead as at the other crash points (its `PlayedProcess` dies: no `finally`, no release, no renewal).
 * The call goes on at the provider, which applies what it has received: the late write after a crash that
 * the journal and the reconciler exist for.
 */
import diagnostics from "node:diagnostics_channel";
import type { ClientRequest } from "node:http";
import type { Kysely } from "kysely";
import type { Database } from "../../../db/schema";
import type { Deadline } from "@lease-lock-lab/lease";
import type { IdentityProviderClient } from "../../provider/client";
import type { LabSettings } from "../settings-schema";
import { takeCrash } from "../settings-store";
import type { PlayedProcess } from "./faulty-lock";

/** The call of a process that died with its one request at the provider (the lane's `client-closed`). */
export class DiedDuringCall extends Error {
  readonly attempts = 1;
}

/** How long to wait at most for the request to leave: past it, the process dies all the same. */
const sendingLimitMs = 5_000;

/**
 * Resolves once the request of `operationId` with `method` has been written to its connection (node:http's
 * `http.client.request.start` channel, then the request's `finish`): over loopback, what was written reaches
 * the provider even if the writer dies right after.
 */
function requestWritten(operationId: string, method: string): Promise<void> {
  return new Promise((resolve) => {
    const started = (message: unknown) => {
      const { request } = message as { request: ClientRequest };
      if (request.method !== method || request.getHeader("x-operation-id") !== operationId) return;
      diagnostics.unsubscribe("http.client.request.start", started);
      if (request.writableFinished) done();
      else request.once("finish", done);
    };
    const done = () => {
      clearTimeout(timer);
      diagnostics.unsubscribe("http.client.request.start", started);
      resolve();
    };
    const timer = setTimeout(done, sendingLimitMs);
    diagnostics.subscribe("http.client.request.start", started);
  });
}

/** `provider`, whose next link call (once, across instances) dies with its request at the provider. */
function dyingLink(provider: IdentityProviderClient, db: Kysely<Database>): IdentityProviderClient {
  return {
    ...provider,
    async linkAccount(primaryId, secondaryId, context) {
      if ((await takeCrash(db)) !== "during-link") return provider.linkAccount(primaryId, secondaryId, context);
      // The death aborts the call: its connection closes, and an aborted call is never retried.
      const death = new AbortController();
      const deadline = Object.create(context.deadline, {
        signal: { value: AbortSignal.any([context.deadline.signal, death.signal]) },
      }) as Deadline;
      const written = requestWritten(context.operationId, "POST");
      void provider.linkAccount(primaryId, secondaryId, { ...context, deadline }).catch(() => undefined);
      await written;
      // It dies the moment its request is out: the provider has it, and answers only after its latency.
      await new Promise((resolve) => setImmediate(resolve));
      death.abort();
      throw new DiedDuringCall("crashed during its link call (lab fault): the call was at the provider");
    },
  };
}

/**
 * The provider as the operation calls it, `record`ed (each call a phase of its lane); when armed, its next
 * link call dies at the provider, and so does `process`: the operation goes no further.
 */
export function crashingDuringLink(
  provider: IdentityProviderClient,
  faults: { db: Kysely<Database>; settings: LabSettings; process: PlayedProcess },
  record: (provider: IdentityProviderClient) => IdentityProviderClient,
): IdentityProviderClient {
  if (faults.settings.faults.crash !== "during-link") return record(provider);
  const recorded = record(dyingLink(provider, faults.db));
  return {
    ...recorded,
    linkAccount: (primaryId, secondaryId, context) =>
      recorded.linkAccount(primaryId, secondaryId, context).catch((error: unknown) => {
        if (!(error instanceof DiedDuringCall)) throw error;
        faults.process.die("during-link");
        return new Promise<never>(() => undefined); // a dead process goes no further
      }),
  };
}
