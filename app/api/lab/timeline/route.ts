import type { NextRequest } from "next/server";
import { z } from "zod";
import { instrumentDb } from "@/lib/lab/instrument-db";
import { requireLab } from "@/lib/lab/settings";
import { readTimeline, sinceMsSchema } from "@/lib/lab/timeline";
import { userIdSchema } from "@/lib/switch/ids";
import { parseQuery, respond } from "@/lib/web/http";

const timelineQuerySchema = z.strictObject({ sinceMs: sinceMsSchema, userId: userIdSchema.optional() });

/** The timeline's lanes as JSON (the stream pushes the same lanes as they change). */
export async function GET(request: NextRequest): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const { sinceMs, userId } = parseQuery(request, timelineQuerySchema);
    // Read through the lab's own pool: the timeline answers while the app's pool is exhausted.
    return Response.json(await readTimeline(instrumentDb(), { userId, sinceMs }));
  });
}
