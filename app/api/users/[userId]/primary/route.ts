import type { NextRequest } from "next/server";
import { z } from "zod";
import { appDb } from "@/lib/core/db";
import { parseOrThrow } from "@/lib/core/validation";
import { idempotencyKeySchema } from "@/lib/switch/idempotency";
import { identityIdSchema, userIdSchema } from "@/lib/switch/ids";
import { appIdentityProvider as provider } from "@/lib/web/app-provider";
import { headerText, parseJsonBody, respond } from "@/lib/web/http";
import { promote } from "@/lib/web/switch";
import { requireSessionFor, sessionCookieName } from "@/lib/web/session";

const bodySchema = z.strictObject({ identityId: identityIdSchema });

export async function POST(
  request: NextRequest,
  { params }: RouteContext<"/api/users/[userId]/primary">,
): Promise<Response> {
  return respond(request, async () => {
    const db = appDb();
    const userId = parseOrThrow(userIdSchema, (await params).userId, "userId");
    await requireSessionFor(db, request.cookies.get(sessionCookieName)?.value, userId);
    const { identityId } = await parseJsonBody(request, bodySchema);
    const key = parseOrThrow(
      idempotencyKeySchema.optional(),
      headerText(request, "Idempotency-Key") ?? undefined,
      "Idempotency-Key",
    );
    return Response.json(await promote(db, provider, { userId, identityId }, key));
  });
}
