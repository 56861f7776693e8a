/**
 * The simulated identity provider, as MSW request handlers: Auth0-shaped Management API endpoints over
 * the `idp` schema, slowed and broken on purpose by the lab's settings, with every call logged. Plus three
 * lab-only endpoints (state, reset, health), which are neither delayed nor logged. They answer real HTTP
 * in the provider's own process (server.ts).
 */
import type { Kysely } from "kysely";
import { delay, http, HttpResponse } from "msw";
import { z } from "zod";
import { seedProviderAccounts } from "../../db/seed-data";
import { CallTransit, machineNow, RecentTimes } from "./call-timing";
import {
  effectiveChaos,
  type Chaos,
  type ProviderEndpoint,
  type ProviderSettings,
  type ScriptedOutcome,
} from "./chaos-settings";
import { randomForDraw, rollOutcome, sampleLatency, type Random } from "./chaos";
import type { ProviderHealth } from "./health";
import type { IdpDatabase } from "./schema";
import {
  getAccount,
  IdpError,
  linkAccount,
  listAccounts,
  resetProviderState,
  unlinkIdentity,
  type Fencing,
} from "./store";

type Answer = { status: number; body: unknown; headers?: Record<string, string> };
/** What became of a call, for the log: its HTTP answer (0 for none) and anything unusual about it. */
type Played = { answer: Answer | "network-error"; logStatus: number; outcome: string | null };

const linkBodySchema = z.object({ provider: z.string().min(1), user_id: z.string().min(1) });
const renameBodySchema = z.object({ name: z.string().min(1).max(300) });

/** How long a "hanging" provider waits for its caller to give up before it gives up itself. */
const hangLimitMs = 120_000;

/**
 * The simulator's port for its knobs: whoever drives it (the lab) says what they are for each call, and
 * hands out the one-shot scripted outcomes, each once.
 */
export interface ChaosSource {
  settings(): Promise<ProviderSettings>;
  takeScriptedOutcome(endpoint: ProviderEndpoint): Promise<ScriptedOutcome | null>;
}

export function simulatedProviderHandlers(
  baseUrl: string,
  db: Kysely<IdpDatabase>,
  chaosSource: ChaosSource,
  health: ProviderHealth,
) {
  // The sampled latency is the whole call as the caller sees it (call-timing.ts). The wait before the work
  // leaves room for the work's usual time (a high estimate from its recent times, per endpoint); the answer
  // then waits for whatever is left, so a call answers neither early nor late when the process is busy.
  const recentWorkMs: Record<ProviderEndpoint | "rename", RecentTimes> = {
    get: new RecentTimes(),
    unlink: new RecentTimes(),
    link: new RecentTimes(),
    rename: new RecentTimes(),
  };
  const transit = new CallTransit();

  /** Wraps one Management API endpoint: latency, injected failures, Auth0-style errors, the call log. */
  function endpoint(
    name: ProviderEndpoint | "rename",
    perform: (request: Request, params: Record<string, string>, fencing: Fencing) => Promise<Answer>,
  ) {
    return async ({
      request,
      params,
    }: {
      request: Request;
      params: Record<string, string | readonly string[] | undefined>;
    }) => {
      const sentAt = transit.sentAt(request);
      const settings = await chaosSource.settings();
      // A rename (profile update) has no per-endpoint overrides or script: the lab's global latency and failures.
      const chaos: Chaos = name === "rename" ? settings : effectiveChaos(settings, name);
      const random = await randomSource(db, settings.seed);
      const scripted =
        name !== "rename" && settings.script[name].length > 0 ? await chaosSource.takeScriptedOutcome(name) : null;
      const outcome = scripted ?? rollOutcome(chaos, random);
      const latencyMs = sampleLatency(chaos, random);
      const fencing = {
        fence: numberHeader(request, "X-Fencing-Token"),
        generation: numberHeader(request, "X-Fencing-Generation"),
        holder: request.headers.get("X-Operation-Id"),
        enforce: settings.enforceFencing,
        byGeneration: settings.fenceGenerations,
      };
      const { applyLimitMs } = settings;
      // The limit holds even when a timer fires late on a busy process: past it, nothing is applied.
      const apply = () =>
        machineNow() - sentAt > applyLimitMs
          ? Promise.resolve(errorAnswer(notAppliedInTime))
          : applied(() => perform(request, decodeParams(params), fencing));

      // The provider's hard limit: a request it could not apply in time is dropped, answered at the limit.
      const dropped = (outcome === "ok" || outcome === "applied-late") && latencyMs > applyLimitMs;
      const answerAt = sentAt + (dropped ? applyLimitMs : latencyMs) - transit.wayBackMs();
      const waitMs = Math.max(0, answerAt - machineNow() - recentWorkMs[name].high());
      const waitEnds = machineNow() + waitMs;
      const played = await play(dropped ? "dropped" : outcome, waitMs, chaos.retryAfterSeconds, request.signal, apply);
      // As the caller will see it: answered at `answerAt` at the earliest, and the answer's way back.
      const durationMs = Math.max(machineNow(), answerAt) + transit.wayBackMs() - sentAt;
      await db
        .insertInto("idp.calls")
        .values({
          method: request.method,
          path: decodeURIComponent(new URL(request.url).pathname),
          status: played.logStatus,
          outcome: played.outcome,
          operation_id: request.headers.get("X-Operation-Id"),
          duration_ms: Math.round(durationMs),
        })
        .execute();
      if (outcome === "ok" && !dropped) recentWorkMs[name].note(machineNow() - waitEnds);
      await delayUntil(answerAt);
      if (played.answer === "network-error") return HttpResponse.error();
      return HttpResponse.json(played.answer.body as Record<string, unknown>, {
        status: played.answer.status,
        headers: played.answer.headers,
      });
    };
  }

  const api = `${baseUrl}/api/v2`;
  return [
    http.get(
      `${api}/users/:id`,
      endpoint("get", async (_request, params, fencing) => ({
        status: 200,
        body: await getAccount(db, params.id!, fencing),
      })),
    ),
    http.delete(
      `${api}/users/:primaryId/identities/:provider/:userId`,
      endpoint("unlink", async (_request, params, fencing) => ({
        status: 200,
        body: await unlinkIdentity(db, params.primaryId!, params.provider!, params.userId!, fencing),
      })),
    ),
    http.post(
      `${api}/users/:primaryId/identities`,
      endpoint("link", async (request, params, fencing) => {
        const body = linkBodySchema.safeParse(
          await request
            .clone()
            .json()
            .catch(() => null),
        );
        if (!body.success)
          throw new IdpError(
            400,
            "Bad Request",
            "Payload validation error: provider and user_id are required",
            "invalid_body",
          );
        return {
          status: 201,
          body: await linkAccount(db, params.primaryId!, body.data.provider, body.data.user_id, fencing),
        };
      }),
    ),
    http.patch(
      `${api}/users/:id`,
      // Profile fields are not kept by the simulator: the call is checked, slowed, broken and logged like the others.
      endpoint("rename", async (request, params, fencing) => {
        const body = renameBodySchema.safeParse(
          await request
            .clone()
            .json()
            .catch(() => null),
        );
        if (!body.success)
          throw new IdpError(400, "Bad Request", "Payload validation error: name is required", "invalid_body");
        return { status: 200, body: { ...(await getAccount(db, params.id!, fencing)), name: body.data.name } };
      }),
    ),
    http.get(`${baseUrl}/lab/state`, async () => {
      const calls = await db.selectFrom("idp.calls").selectAll().orderBy("id", "desc").limit(300).execute();
      return HttpResponse.json({
        accounts: await listAccounts(db),
        calls: calls.reverse().map((call) => ({
          at: call.at.toISOString(),
          method: call.method,
          path: call.path,
          status: call.status,
          outcome: call.outcome,
          operationId: call.operation_id,
          durationMs: call.duration_ms,
        })),
      });
    }),
    http.post(`${baseUrl}/lab/reset`, async () => {
      await resetProviderState(db, seedProviderAccounts());
      await db.deleteFrom("idp.random_state").execute();
      return new HttpResponse(null, { status: 204 });
    }),
    http.get(`${baseUrl}/lab/health`, () => HttpResponse.json(health)),
  ];
}

async function play(
  outcome: ScriptedOutcome | "dropped",
  waitMs: number,
  retryAfterSeconds: number,
  signal: AbortSignal,
  apply: () => Promise<Answer>,
): Promise<Played> {
  if (outcome === "timeout") {
    await untilAborted(signal, hangLimitMs);
    return { answer: "network-error", logStatus: 0, outcome: "timeout" };
  }
  if (outcome === "dropped") {
    // Not applied, now or later.
    await delay(waitMs);
    return { answer: errorAnswer(notAppliedInTime), logStatus: 504, outcome: null };
  }
  await delay(waitMs);
  switch (outcome) {
    case "network-error":
      return { answer: "network-error", logStatus: 0, outcome };
    case "429":
      return { answer: rateLimited(retryAfterSeconds), logStatus: 429, outcome: null };
    case "500":
      return {
        answer: errorAnswer(new IdpError(500, "Internal Server Error", "Internal error", "internal_error")),
        logStatus: 500,
        outcome: null,
      };
    case "503":
      return {
        answer: errorAnswer(
          new IdpError(503, "Service Unavailable", "The service is temporarily unavailable", "temporarily_unavailable"),
        ),
        logStatus: 503,
        outcome: null,
      };
    case "applied-late": {
      // The ambiguous outcome: the change is committed, but the answer arrives after the caller left.
      // The token is checked when the write is applied: a fenced read since it arrived refuses it.
      const answer = await apply();
      await untilAborted(signal, hangLimitMs);
      // Applied late, unless its limit passed first (then it is a plain 504).
      if (errorCodeOf(answer) === notAppliedInTime.errorCode)
        return { answer, logStatus: answer.status, outcome: null };
      return { answer, logStatus: answer.status, outcome: isFenced(answer) ? "fenced" : outcome };
    }
    case "ok": {
      // A caller that gave up before the provider got to the request: the change is not applied.
      if (signal.aborted)
        return {
          answer: errorAnswer(
            new IdpError(499, "Client Closed Request", "The caller closed the request", "client_closed"),
          ),
          logStatus: 499,
          outcome: "client-closed",
        };
      const answer = await apply();
      return { answer, logStatus: answer.status, outcome: isFenced(answer) ? "fenced" : null };
    }
  }
}

/** The provider's answer to a request it did not apply within its limit: it never will. */
const notAppliedInTime = new IdpError(
  504,
  "Gateway Timeout",
  "The request was not processed in time; it was not applied",
  "request_timeout",
);

/** How late a timer fires here (the least of its recent lateness): waits end that much early, never earlier. */
const timerLateness = new RecentTimes();

async function delayUntil(moment: number): Promise<void> {
  const waitMs = moment - machineNow() - timerLateness.least();
  if (waitMs <= 0) return;
  const waitStarted = machineNow();
  await delay(waitMs);
  timerLateness.note(machineNow() - waitStarted - waitMs);
}

async function applied(perform: () => Promise<Answer>): Promise<Answer> {
  try {
    return await perform();
  } catch (error) {
    if (error instanceof IdpError) return errorAnswer(error);
    throw error;
  }
}

const errorCodeOf = (answer: Answer): string | undefined => (answer.body as { errorCode?: string } | null)?.errorCode;

function isFenced(answer: Answer): boolean {
  return errorCodeOf(answer) === "fenced_token";
}

function errorAnswer(error: IdpError): Answer {
  return {
    status: error.statusCode,
    body: { statusCode: error.statusCode, error: error.error, message: error.message, errorCode: error.errorCode },
  };
}

function rateLimited(retryAfterSeconds: number): Answer {
  const answer = errorAnswer(
    new IdpError(429, "Too Many Requests", "Global limit has been reached", "too_many_requests"),
  );
  return {
    ...answer,
    headers: {
      "Retry-After": String(retryAfterSeconds),
      "x-ratelimit-limit": "50",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": String(Math.ceil(Date.now() / 1000) + retryAfterSeconds),
    },
  };
}

/**
 * The random source for one call: seeded runs take the next draw number from the database, so the
 * sequence is the same on every app instance and after every reset; unseeded runs use Math.random.
 */
async function randomSource(db: Kysely<IdpDatabase>, seed: number | null): Promise<Random> {
  if (seed === null) return Math.random;
  const { draws } = await db
    .insertInto("idp.random_state")
    .values({ seed, draws: "1" })
    .onConflict((conflict) =>
      conflict.column("id").doUpdateSet((eb) => ({
        draws: eb
          .case()
          .when("idp.random_state.seed", "=", seed)
          .then(eb("idp.random_state.draws", "+", "1"))
          .else("1")
          .end(),
        seed,
      })),
    )
    .returning("draws")
    .executeTakeFirstOrThrow();
  return randomForDraw(seed, Number(draws));
}

function untilAborted(signal: AbortSignal, limitMs: number): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, limitMs);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A fencing header's number (`X-Fencing-Token`: the fence; `X-Fencing-Generation`: its generation), or null. */
function numberHeader(request: Request, name: string): bigint | null {
  const header = request.headers.get(name);
  return header && /^\d{1,19}$/.test(header) ? BigInt(header) : null;
}

function decodeParams(params: Record<string, string | readonly string[] | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).map(([key, value]) => [key, decodeURIComponent(String(value))]));
}
