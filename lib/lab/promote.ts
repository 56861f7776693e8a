/**
 * The switch as the app runs it: the lab's settings, read once per request, choose the guard. Every
 * request is recorded on the timeline, from its arrival to its answer, refused ones included.
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { config } from "../core/config";
import { defaultMaxHoldMs } from "../lease";
import type { IdentityProviderClient } from "../provider/client";
import type { Guard } from "../switch/guard";
import {
  promoteToPrimary,
  promoteToPrimaryOnce,
  type PromoteRequest,
  type PromoteResult,
} from "../switch/switch-primary";
import { getLabSettings } from "./settings-store";
import { guardFor } from "./strategies";
import { answering, startRecording } from "./lane-recorder";
import { recordedGuard, recordingProvider } from "./recorded";

export async function promote(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  request: PromoteRequest,
  idempotencyKey?: string,
): Promise<PromoteResult> {
  // With the lab off nobody can read the timeline: the switch runs without recording it.
  if (!config.labEnabled) {
    const settings = await getLabSettings(db);
    return run(db, provider, guardFor(db, settings), request, idempotencyKey, settings.leaseTtlMs);
  }
  // An idempotent request learns its operation's id from its key's record; the others get theirs now.
  const operationId = idempotencyKey === undefined ? (request.operationId ?? randomUUID()) : undefined;
  const recorder = await startRecording({
    userId: request.userId,
    toIdentityId: request.identityId,
    strategy: "unknown",
    operationId,
  });
  return answering(recorder, async () => {
    const settings = await getLabSettings(db);
    recorder.setStrategy(settings.strategy);
    const guard = recordedGuard(guardFor(db, settings, recorder), recorder, settings.strategy === "lease");
    return run(
      db,
      recordingProvider(provider, recorder),
      guard,
      { ...request, operationId },
      idempotencyKey,
      settings.leaseTtlMs,
    );
  });
}

function run(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  guard: Guard,
  request: PromoteRequest,
  idempotencyKey: string | undefined,
  leaseTtlMs: number,
): Promise<PromoteResult> {
  if (idempotencyKey === undefined) return promoteToPrimary(db, provider, guard, request);
  // A claim is stale once no lease its request could hold (renewals included) can still be alive.
  const staleAfterMs = 2 * defaultMaxHoldMs(leaseTtlMs);
  return promoteToPrimaryOnce(db, provider, guard, { ...request, idempotencyKey, staleAfterMs });
}
