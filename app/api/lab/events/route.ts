import type { NextRequest } from "next/server";
import { appDb } from "@/lib/core/db";
import { recentEvents } from "@/lib/switch/events";
import { parseOrThrow } from "@/lib/core/validation";
import { respond } from "@/lib/web/http";
import { requireLab } from "@/lib/lab/settings";
import { userIdSchema } from "@/lib/switch/ids";

/** The lab's narration: take-overs, recoveries, fenced calls, lost leases, failed releases (newest first). */
export async function GET(request: NextRequest): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const userId = request.nextUrl.searchParams.get("userId");
    return Response.json({
      events: await recentEvents(appDb(), userId === null ? undefined : parseOrThrow(userIdSchema, userId, "userId")),
    });
  });
}
