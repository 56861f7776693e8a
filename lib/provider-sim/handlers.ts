/**
 * The simulated identity provider, as MSW request handlers: Auth0-shaped Management API endpoints over
 * the `idp` schema, slowed and broken on purpose by the lab's settings, with every call logged. Plus two
 * lab-only endpoints (state, reset), which are neither delayed nor logged.
 */
import type { Kysely } from "kysely";
import { delay, http, HttpResponse } from "msw";
import { z } from "zod";
import type { Database } from "../../db/schema";
import { seedProviderAccounts } from "../../db/seed-data";
import { getLabSettings, type LabSettings } from "../lab-settings";
import { getAccount, IdpError, linkAccount, listAccounts, resetProviderState, unlinkIdentity } from "./store";

type Answer = { status: number; body: unknown };

const linkBodySchema = z.object({ provider: z.string().min(1), user_id: z.string().min(1) });

export function simulatedProviderHandlers(baseUrl: string, db: () => Kysely<Database>) {
  /** Wraps one Management API endpoint: latency, injected failures, Auth0-style errors, the call log. */
  function endpoint(perform: (request: Request, params: Record<string, string>) => Promise<Answer>) {
    return async ({ request, params }: { request: Request; params: Record<string, string | readonly string[] | undefined> }) => {
      const started = performance.now();
      const settings = await getLabSettings(db());
      await delay(latencyOf(settings));
      const answer = await answerFor(settings, request, () => perform(request, decodeParams(params)));
      await db()
        .insertInto("idp.calls")
        .values({
          method: request.method,
          path: decodeURIComponent(new URL(request.url).pathname),
          status: answer.status,
          operation_id: request.headers.get("X-Operation-Id"),
          duration_ms: Math.round(performance.now() - started),
        })
        .execute();
      return HttpResponse.json(answer.body as Record<string, unknown>, { status: answer.status });
    };
  }

  const api = `${baseUrl}/api/v2`;
  return [
    http.get(
      `${api}/users/:id`,
      endpoint(async (_request, params) => ({ status: 200, body: await getAccount(db(), params.id!) })),
    ),
    http.delete(
      `${api}/users/:primaryId/identities/:provider/:userId`,
      endpoint(async (_request, params) => ({
        status: 200,
        body: await unlinkIdentity(db(), params.primaryId!, params.provider!, params.userId!),
      })),
    ),
    http.post(
      `${api}/users/:primaryId/identities`,
      endpoint(async (request, params) => {
        const body = linkBodySchema.safeParse(await request.json().catch(() => null));
        if (!body.success) throw new IdpError(400, "Bad Request", "Payload validation error: provider and user_id are required", "invalid_body");
        return { status: 201, body: await linkAccount(db(), params.primaryId!, body.data.provider, body.data.user_id) };
      }),
    ),
    http.get(`${baseUrl}/lab/state`, async () => {
      const calls = await db().selectFrom("idp.calls").selectAll().orderBy("id", "desc").limit(300).execute();
      return HttpResponse.json({
        accounts: await listAccounts(db()),
        calls: calls.reverse().map((call) => ({
          at: call.at.toISOString(),
          method: call.method,
          path: call.path,
          status: call.status,
          operationId: call.operation_id,
          durationMs: call.duration_ms,
        })),
      });
    }),
    http.post(`${baseUrl}/lab/reset`, async () => {
      await resetProviderState(db(), seedProviderAccounts());
      return new HttpResponse(null, { status: 204 });
    }),
  ];
}

async function answerFor(settings: LabSettings, request: Request, perform: () => Promise<Answer>): Promise<Answer> {
  // A caller that gave up before the provider got to the request: the change is not applied.
  if (request.signal.aborted) return idpErrorAnswer(new IdpError(499, "Client Closed Request", "The caller closed the request", "client_closed"));
  if (Math.random() < settings.provider.failureRate) {
    return idpErrorAnswer(new IdpError(503, "Service Unavailable", "The service is temporarily unavailable", "temporarily_unavailable"));
  }
  try {
    return await perform();
  } catch (error) {
    if (error instanceof IdpError) return idpErrorAnswer(error);
    throw error;
  }
}

function idpErrorAnswer(error: IdpError): Answer {
  return { status: error.statusCode, body: { statusCode: error.statusCode, error: error.error, message: error.message, errorCode: error.errorCode } };
}

function latencyOf(settings: LabSettings): number {
  const { latencyMs, jitterMs } = settings.provider;
  return Math.max(0, latencyMs + (Math.random() * 2 - 1) * jitterMs);
}

function decodeParams(params: Record<string, string | readonly string[] | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).map(([key, value]) => [key, decodeURIComponent(String(value))]));
}
