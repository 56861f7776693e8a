import type { NextRequest } from "next/server";
import { z } from "zod";
import { appDb } from "@/lib/core/db";
import { parseOrThrow } from "@/lib/core/validation";
import { requireLab } from "@/lib/lab/settings";
import { supportSetPrimary } from "@/lib/lab/support";
import { identityIdSchema, userIdSchema } from "@/lib/switch/ids";
import { appIdentityProvider as provider } from "@/lib/web/app-provider";
import { parseJsonBody, respond } from "@/lib/web/http";

const bodySchema = z.strictObject({ identityId: identityIdSchema });

/** The support tool's path: sets the primary without any lock (lab only, no user session: it is staff's). */
export async function POST(
  request: NextRequest,
  { params }: RouteContext<"/api/lab/support/users/[userId]/primary">,
): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const userId = parseOrThrow(userIdSchema, (await params).userId, "userId");
    const { identityId } = await parseJsonBody(request, bodySchema);
    return Response.json(await supportSetPrimary(appDb(), provider, { userId, identityId }));
  });
}
