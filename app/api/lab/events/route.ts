import type { NextRequest } from "next/server";
import { z } from "zod";
import { appDb } from "@/lib/core/db";
import { recentEvents } from "@/lib/switch/events";
import { respond, parseQuery } from "@/lib/web/http";
import { requireLab } from "@/lib/lab/settings";
import { userIdSchema } from "@/lib/switch/ids";

const eventsQuerySchema = z.strictObject({ userId: userIdSchema.optional() });

/** The lab's narration: take-overs, recoveries, fenced calls, lost leases, failed releases (newest first). */
export async function GET(request: NextRequest): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const { userId } = parseQuery(request, eventsQuerySchema);
    return Response.json({ events: await recentEvents(appDb(), userId) });
  });
}
