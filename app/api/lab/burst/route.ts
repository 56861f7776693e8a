import type { NextRequest } from "next/server";
import { z } from "zod";
import { appDb } from "@/lib/core/db";
import { parseJsonBody, respond } from "@/lib/web/http";
import { appIdentityProvider as provider } from "@/lib/web/app-provider";
import { fireBurst } from "@/lib/lab/burst";
import { requireLab } from "@/lib/lab/settings";
import { requireSessionFor, sessionCookieName } from "@/lib/web/session";
import { identityIdSchema, userIdSchema } from "@/lib/switch/ids";

const bodySchema = z
  .strictObject({
    userId: userIdSchema,
    count: z.number().int().min(1).max(50),
    identityId: identityIdSchema.optional(),
    identityIds: z.array(identityIdSchema).min(1).max(50).optional(),
  })
  .refine((body) => body.identityId === undefined || body.identityIds === undefined, {
    path: ["identityIds"],
    message: "give identityId (one target) or identityIds (targets in turn), not both",
  });

/** "Fire N concurrent clicks": N switches for the signed-in user at once, summarised. */
export async function POST(request: NextRequest): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const db = appDb();
    const burst = await parseJsonBody(request, bodySchema);
    await requireSessionFor(db, request.cookies.get(sessionCookieName)?.value, burst.userId);
    return Response.json(await fireBurst(db, provider, burst));
  });
}
