import type { NextRequest } from "next/server";
import { appDb } from "@/lib/core/db";
import { UserNotFound } from "@/lib/core/problems";
import { parseOrThrow } from "@/lib/core/validation";
import { getUserView, userIdSchema } from "@/lib/switch/users";
import { respond } from "@/lib/web/http";
import { requireSessionFor, sessionCookieName } from "@/lib/web/session";

export async function GET(request: NextRequest, { params }: RouteContext<"/api/users/[userId]">): Promise<Response> {
  return respond(async () => {
    const db = appDb();
    const userId = parseOrThrow(userIdSchema, (await params).userId, "userId");
    await requireSessionFor(db, request.cookies.get(sessionCookieName)?.value, userId);
    const view = await getUserView(db, userId);
    if (!view) throw new UserNotFound(userId);
    return Response.json(view);
  });
}
