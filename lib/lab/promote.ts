/**
 * The switch as the lab runs it: the lab's settings, read once per request, choose the guard. Every
 * request is recorded on the timeline, from its arrival to its answer, refused ones included.
 */
import { randomUUID } from "node:crypto";
import { trace } from "@opentelemetry/api";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import type { IdentityProviderClient } from "../provider/client";
import { promoteRequest, type PromoteRequest, type PromoteResult } from "../switch/switch-primary";
import { crashingDuringLink } from "./interceptors/crash-during-call";
import { PlayedProcess } from "./interceptors/faulty-lock";
import { labSettings } from "./settings-snapshot";
import { guardFor } from "./strategies";
import { answering, startRecording } from "./lane-recorder";
import { recordedGuard, recordingProvider } from "./interceptors/recorded";

const tracer = trace.getTracer("lease-lock-lab/lab");

/**
 * Each switch in a span of its own carrying its `operation.id`: the lab's waterfall finds an operation's spans
 * under it (recent-spans.ts), even where one request runs several switches (a burst) or none reaches the provider.
 */
export function promote(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  request: PromoteRequest,
  idempotencyKey?: string,
): Promise<PromoteResult> {
  // An idempotent request learns its operation's id from its key's record; the others get theirs now.
  const operationId = idempotencyKey === undefined ? (request.operationId ?? randomUUID()) : undefined;
  return tracer.startActiveSpan("switch", async (span) => {
    if (operationId) span.setAttribute("operation.id", operationId);
    try {
      const result = await recordedPromote(db, provider, request, idempotencyKey, operationId);
      span.setAttribute("operation.id", result.operationId);
      return result;
    } finally {
      span.end();
    }
  });
}

async function recordedPromote(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  request: PromoteRequest,
  idempotencyKey: string | undefined,
  operationId: string | undefined,
): Promise<PromoteResult> {
  const recorder = await startRecording({
    userId: request.userId,
    toIdentityId: request.identityId,
    strategy: "unknown",
    operationId,
  });
  return answering(recorder, async () => {
    const settings = await labSettings(db);
    recorder.setStrategy(settings.strategy);
    const process = new PlayedProcess();
    const leased = settings.strategy === "lease";
    const guard = recordedGuard(guardFor(db, settings, recorder, process), recorder, leased);
    // A crash with the link at the provider is played by the client (the lease's only: the other guards have
    // no crash to play).
    const record = (calling: IdentityProviderClient) => recordingProvider(calling, recorder);
    const recorded = leased ? crashingDuringLink(provider, { db, settings, process }, record) : record(provider);
    return promoteRequest(
      db,
      recorded,
      guard,
      { ...request, operationId },
      { idempotencyKey, leaseTtlMs: settings.leaseTtlMs },
    );
  });
}
