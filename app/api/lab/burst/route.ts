import type { NextRequest } from "next/server";
import { z } from "zod";
import { appDb } from "@/lib/db";
import { parseJsonBody, respond } from "@/lib/http";
import { appIdentityProvider as provider } from "@/lib/app-provider";
import { fireBurst, requireLab } from "@/lib/lab";
import { requireSessionFor, sessionCookieName } from "@/lib/session";
import { identityIdSchema, userIdSchema } from "@/lib/users";

const bodySchema = z.strictObject({
  userId: userIdSchema,
  count: z.number().int().min(1).max(50),
  identityId: identityIdSchema.optional(),
});

/** "Fire N concurrent clicks": N switches for the signed-in user at once, summarised. */
export async function POST(request: NextRequest): Promise<Response> {
  return respond(async () => {
    requireLab();
    const db = appDb();
    const burst = await parseJsonBody(request, bodySchema);
    await requireSessionFor(db, request.cookies.get(sessionCookieName)?.value, burst.userId);
    return Response.json(await fireBurst(db, provider, burst));
  });
}
