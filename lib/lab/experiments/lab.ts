/**
 * The toolkit an experiment runs with, inside the app's process: settings, switches, renames and the
 * support path called as the routes call them (each with an operation id known in advance, so the run's
 * operations can be shown), the audit, the provider's log and the lease row, and a clock from the start.
 *
 * It also records the run for replay (`recording()`): each variant (from one `fresh()` to the next) with
 * its lanes, read before the next reset wipes them; each request as an invocation and its completion;
 * and what the provider, the user row and the lease were after each answer (read on the lab's own pool).
 */
import { randomUUID } from "node:crypto";
import { setTimeout as pause } from "node:timers/promises";
import type { Kysely } from "kysely";
import type { Database } from "../../../db/schema";
import { problemFor, type Problem } from "../../core/problems";
import type { IdentityProviderClient } from "../../provider/client";
import { fetchProviderState, type ProviderCall } from "../../provider-sim/lab-client";
import type { Guard } from "../../switch/guard";
import { identityActionLease } from "../../switch/users";
import { promoteToPrimary } from "../../switch/switch-primary";
import { auditConsistency, type UserAudit } from "../audit";
import type { PhaseName } from "../lane";
import { answering, startRecording, type OperationRecorder } from "../lane-recorder";
import { promote } from "../promote";
import { recordedGuard, recordingProvider } from "../interceptors/recorded";
import { rename } from "../rename";
import { resetLab } from "../reset";
import { changeLabSettings } from "../settings";
import { supportSetPrimary } from "../support";
import { untilAged, untilInPhase } from "./lab-waits";
import { runRecorder } from "./run-recorder";
import type { HistoryOp } from "./runs";

/** The demo user every experiment works on, and her identities (the first is her primary at the seed). */
export const ada = {
  userId: "ada",
  google: "google-oauth2|104423",
  github: "github|8812",
  email: "auth0|ada-email",
  apple: "apple|001122.ada",
} as const;

/** One request of a run, as its caller saw it: times in ms since the run started. */
export interface Attempt {
  label: string;
  operationId: string;
  status: number;
  problemType: string | null;
  /** The Retry-After its route would send with the answer (a 503's), or null. */
  retryAfter: string | null;
  /** The problem's detail, as its route would answer it, or null. */
  detail: string | null;
  /** A 409's earlier operation whose provider call may still land (the problem's `awaitedOperationId`), or null. */
  awaitedOperationId: string | null;
  startedMs: number;
  endedMs: number;
}

/** A guard an experiment brings (a textbook lease, a second memory), and the strategy its lane names. */
export interface OwnGuard {
  strategy: string;
  guard: (lane: OperationRecorder) => Guard;
}

/** Latency settings for the provider's switch calls, scaled down so a run fits in seconds. */
export const slowSwitchCalls = (switchCallMs: number, getMs = 20) => ({
  latencyMode: "fixed",
  latencyMs: switchCallMs,
  jitterMs: 0,
  endpoints: { get: { latencyMs: getMs }, unlink: { latencyMs: switchCallMs }, link: { latencyMs: switchCallMs } },
});

export type Lab = ReturnType<typeof labFor>;

type Recorder = ReturnType<typeof runRecorder>;

/**
 * One request of the run, recorded as an invocation and its completion: `run` is the request, its error
 * answered as a route answers it.
 */
function attempter(recorder: Recorder, operationIds: string[], sinceStart: () => number) {
  return async function attempt(
    label: string,
    f: HistoryOp["f"],
    value: Record<string, unknown>,
    run: (operationId: string) => Promise<unknown>,
  ): Promise<Attempt> {
    const operationId = randomUUID();
    operationIds.push(operationId);
    const process = recorder.invoke(operationId, label, f, value);
    const startedMs = sinceStart();
    const answered = (status: number, problemType: string | null, problem?: Problem): Attempt => {
      recorder.complete(process, { operationId, label, f }, { status, problemType });
      const retryAfter = problem?.headers["Retry-After"] ?? null;
      const detail = problem?.detail ?? null;
      const awaited = problem?.extensions.awaitedOperationId;
      const awaitedOperationId = typeof awaited === "string" ? awaited : null;
      const ended = { startedMs, endedMs: sinceStart() };
      return { label, operationId, status, problemType, retryAfter, detail, awaitedOperationId, ...ended };
    };
    try {
      await run(operationId);
      return answered(200, null);
    } catch (error) {
      // The answer a route gives (a dropped connection: 503 database-unavailable).
      const problem = problemFor(error);
      if (problem) return answered(problem.status, problem.slug, problem);
      // What a route would answer 500 for: kept as a fact of the run.
      console.error(`[experiment] ${label} failed unexpectedly:`, error);
      return answered(500, error instanceof Error ? error.message : String(error));
    }
  };
}

/** The requests an experiment makes: switches (the route's, or under a guard of its own), renames, the support tool. */
function requestsOf(db: Kysely<Database>, provider: IdentityProviderClient, attempt: ReturnType<typeof attempter>) {
  return {
    /**
     * A switch of ada's primary as the route runs it (the settings choose the guard), or under a guard of
     * the experiment's own (`own`), recorded on its lane as the route's are.
     */
    switchTo: (identityId: string, label: string, own?: OwnGuard) =>
      attempt(label, "switch", { identityId }, async (operationId) => {
        const request = { userId: ada.userId, identityId, operationId };
        if (!own) return promote(db, provider, request);
        const recorder = await startRecording({
          userId: ada.userId,
          toIdentityId: identityId,
          strategy: own.strategy,
          operationId,
        });
        return answering(recorder, () =>
          promoteToPrimary(
            db,
            recordingProvider(provider, recorder),
            recordedGuard(own.guard(recorder), recorder, own.strategy === "lease"),
            request,
          ),
        );
      }),
    /** `PATCH /api/users/ada` as the route runs it. */
    rename: (displayName: string, label: string) =>
      attempt(label, "rename", { displayName }, (operationId) =>
        rename(db, provider, { userId: ada.userId, displayName, operationId }),
      ),
    /** The support tool's path, without any lock. */
    support: (identityId: string, label: string) =>
      attempt(label, "support-switch", { identityId }, (operationId) =>
        supportSetPrimary(db, provider, { userId: ada.userId, identityId, operationId }),
      ),
    /** A bare acquisition of ada's lease, no switch: `run` draws its own lane (see race.ts). */
    acquire: (label: string, run: (operationId: string) => Promise<unknown>) => attempt(label, "acquire", {}, run),
  };
}

/** What an experiment reads: the audit, the provider's log, the lease row, and waits on the lease. */
function readingsOf(db: Kysely<Database>, sinceStart: () => number) {
  const lease = async () => (await identityActionLease.inspect(db, ada.userId))!;
  return {
    audit: async (): Promise<UserAudit> =>
      (await auditConsistency(db)).users.find((user) => user.userId === ada.userId)!,
    calls: async (): Promise<ProviderCall[]> => (await fetchProviderState()).calls,
    lease,
    /** Until the operation's lane shows its `phase` running (a provider call in flight); false after `limitMs`. */
    inPhase: (operationId: string, phase: PhaseName, limitMs: number) => untilInPhase(operationId, phase, limitMs),
    /** Until the lease held now is `ageMs` old on the database's clock (renewals aside); false when none is held. */
    leaseAged: async (ageMs: number) => untilAged(await lease(), ageMs),
    /** Polls the lease row until somebody holds it (or `limitMs` passes): a switch just started has acquired. */
    async leaseTaken(limitMs: number): Promise<void> {
      const since = sinceStart();
      while (!(await lease()).held && sinceStart() - since < limitMs) await pause(10);
    },
    /** Polls the lease row until nobody holds it (or `limitMs` passes); how long that took. */
    async leaseFreeAfter(limitMs: number): Promise<number> {
      const since = sinceStart();
      while ((await lease()).held && sinceStart() - since < limitMs) await pause(25);
      return sinceStart() - since;
    },
  };
}

export function labFor(db: Kysely<Database>, provider: IdentityProviderClient) {
  const operationIds: string[] = [];
  const startedAt = performance.now();
  const sinceStart = () => Math.round(performance.now() - startedAt);
  const recorder = runRecorder(ada.userId, [ada.google, ada.github, ada.email, ada.apple]);
  return {
    db,
    provider,
    operationIds,
    sinceStart,
    configure: (patch: unknown) => changeLabSettings(db, patch),
    /**
     * Back to the seed, then `patch` applied: each variant of a run starts from the same place. Its caption
     * names what sets it apart from the run's other variants, read off their settings; `note` says what no
     * setting does ("two instances").
     */
    async fresh(patch: unknown, note?: string) {
      await recorder.closeVariant();
      await resetLab(db);
      const settings = await changeLabSettings(db, patch);
      await recorder.openVariant(settings, note ?? null);
      return settings;
    },
    /** The run as recorded so far, its last variant closed: for the saved run. */
    recording: () => recorder.finish(),
    /** Resolves when `ms` have passed since the run started. */
    at: (ms: number) => pause(Math.max(0, ms - sinceStart())),
    ...requestsOf(db, provider, attempter(recorder, operationIds, sinceStart)),
    /** Records an operation run elsewhere (e.g. on another app instance), so the run shows it. */
    note: (operationId: string) => {
      operationIds.push(operationId);
      recorder.note(operationId);
    },
    /** A fact the experiment measured itself, numbered on the picture on `operationId`'s lane, at `at`. */
    mark: (operationId: string, what: string, at?: Date) => recorder.mark(operationId, what, at),
    ...readingsOf(db, sinceStart),
  };
}

/** The provider writes (unlink, link) an operation got applied: 2xx answers, late ones included. */
export const appliedWrites = (calls: ProviderCall[], operationId: string): number =>
  calls.filter(
    (call) =>
      call.operationId === operationId &&
      call.method !== "GET" &&
      call.method !== "PATCH" &&
      call.status >= 200 &&
      call.status < 300,
  ).length;

/** An attempt as a fact for `observed`: who, what answer, when. */
export const fact = (attempt: Attempt) => ({
  label: attempt.label,
  operationId: attempt.operationId,
  status: attempt.status,
  problemType: attempt.problemType,
  startedMs: attempt.startedMs,
  endedMs: attempt.endedMs,
});
