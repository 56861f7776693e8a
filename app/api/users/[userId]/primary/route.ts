import type { NextRequest } from "next/server";
import { z } from "zod";
import { appDb } from "@/lib/db";
import { parseJsonBody, parseOrThrow, respond, storedAnswerResponse } from "@/lib/http";
import { appIdentityProvider as provider } from "@/lib/app-provider";
import { idempotencyKeySchema } from "@/lib/idempotency";
import { requireSessionFor, sessionCookieName } from "@/lib/session";
import { promoteToPrimary, promoteToPrimaryOnce } from "@/lib/switch-primary";
import { identityIdSchema, userIdSchema } from "@/lib/users";

const bodySchema = z.strictObject({ identityId: identityIdSchema });

export async function POST(request: NextRequest, { params }: RouteContext<"/api/users/[userId]/primary">): Promise<Response> {
  return respond(async () => {
    const db = appDb();
    const userId = parseOrThrow(userIdSchema, (await params).userId, "userId");
    await requireSessionFor(db, request.cookies.get(sessionCookieName)?.value, userId);
    const { identityId } = await parseJsonBody(request, bodySchema);
    const key = parseOrThrow(idempotencyKeySchema.optional(), request.headers.get("Idempotency-Key") ?? undefined, "Idempotency-Key");
    if (key === undefined) return Response.json(await promoteToPrimary(db, provider, { userId, identityId }));
    return storedAnswerResponse(await promoteToPrimaryOnce(db, provider, { userId, identityId }, key));
  });
}
