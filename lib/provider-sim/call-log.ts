/**
 * The provider's call log (`idp.calls`): one row per call, written once the provider is done with it (applied,
 * refused or dropped), before its answer leaves, so a caller that reads the log after its answer finds it.
 */
import type { Kysely } from "kysely";
import type { IdpDatabase } from "./schema";

/** What became of a call, for the log: its status (0 for no HTTP answer) and anything unusual about it. */
export interface LoggedOutcome {
  status: number;
  outcome: string | null;
}

export async function logCall(
  db: Kysely<IdpDatabase>,
  request: Request,
  { status, outcome }: LoggedOutcome,
  durationMs: number,
): Promise<void> {
  await db
    .insertInto("idp.calls")
    .values({
      method: request.method,
      path: decodeURIComponent(new URL(request.url).pathname),
      status,
      outcome,
      operation_id: request.headers.get("X-Operation-Id"),
      duration_ms: Math.round(durationMs),
    })
    .execute();
}

/** The last 300 calls, oldest first, as `GET /lab/state` lists them. */
export async function recentCalls(db: Kysely<IdpDatabase>) {
  const calls = await db.selectFrom("idp.calls").selectAll().orderBy("id", "desc").limit(300).execute();
  return calls.reverse().map((call) => ({
    id: call.id,
    at: call.at.toISOString(),
    method: call.method,
    path: call.path,
    status: call.status,
    outcome: call.outcome,
    operationId: call.operation_id,
    durationMs: call.duration_ms,
  }));
}
