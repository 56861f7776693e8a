import type { NextRequest } from "next/server";
import { z } from "zod";
import { appDb } from "@/lib/core/db";
import { NotSignedIn } from "@/lib/core/problems";
import { parseOrThrow } from "@/lib/core/validation";
import { idempotencyKeySchema } from "@/lib/switch/idempotency";
import { identityIdSchema, userIdSchema } from "@/lib/switch/ids";
import { appIdentityProvider as provider } from "@/lib/web/app-provider";
import { headerText, parseJsonBody, respond } from "@/lib/web/http";
import { promote } from "@/lib/web/switch";
import { requireSessionFor, sessionCookieName, sessionFor, verifiedSessionId } from "@/lib/web/session";

const bodySchema = z.strictObject({ identityId: identityIdSchema });

export async function POST(
  request: NextRequest,
  { params }: RouteContext<"/api/users/[userId]/primary">,
): Promise<Response> {
  return respond(request, async () => {
    const db = appDb();
    const userId = parseOrThrow(userIdSchema, (await params).userId, "userId");
    const cookie = request.cookies.get(sessionCookieName)?.value;
    const sessionId = await verifiedSessionId(db, cookie);
    if (!sessionId) throw new NotSignedIn();
    // The session's row is checked by the switch's own first statement; bad input is answered after it.
    const input = async () => ({
      identityId: (await parseJsonBody(request, bodySchema)).identityId,
      key: parseOrThrow(
        idempotencyKeySchema.optional(),
        headerText(request, "Idempotency-Key") ?? undefined,
        "Idempotency-Key",
      ),
    });
    const { identityId, key } = await input().catch(async (error: unknown) => {
      await requireSessionFor(db, cookie, userId);
      throw error;
    });
    const requires = sessionFor(sessionId, userId);
    return Response.json(await promote(db, provider, { userId, identityId, requires }, key));
  });
}
