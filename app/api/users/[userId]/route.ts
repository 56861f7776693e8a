import type { NextRequest } from "next/server";
import { appDb } from "@/lib/db";
import { parseOrThrow, respond } from "@/lib/http";
import { getLabSettings } from "@/lib/lab-settings";
import { UserNotFound } from "@/lib/problems";
import { requireSessionFor, sessionCookieName } from "@/lib/session";
import { getUserView, userIdSchema } from "@/lib/users";

export async function GET(request: NextRequest, { params }: RouteContext<"/api/users/[userId]">): Promise<Response> {
  return respond(async () => {
    const db = appDb();
    const userId = parseOrThrow(userIdSchema, (await params).userId, "userId");
    await requireSessionFor(db, request.cookies.get(sessionCookieName)?.value, userId);
    const view = await getUserView(db, userId, (await getLabSettings(db)).leaseTtlMs);
    if (!view) throw new UserNotFound(userId);
    return Response.json(view);
  });
}
