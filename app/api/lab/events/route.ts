import type { NextRequest } from "next/server";
import { appDb } from "@/lib/db";
import { recentEvents } from "@/lib/events";
import { parseOrThrow, respond } from "@/lib/http";
import { requireLab } from "@/lib/lab";
import { userIdSchema } from "@/lib/users";

/** The lab's narration: take-overs, recoveries, fenced calls, lost leases, failed releases (newest first). */
export async function GET(request: NextRequest): Promise<Response> {
  return respond(async () => {
    requireLab();
    const userId = request.nextUrl.searchParams.get("userId");
    return Response.json({ events: await recentEvents(appDb(), userId === null ? undefined : parseOrThrow(userIdSchema, userId, "userId")) });
  });
}
