import type { NextRequest } from "next/server";
import { UserNotFound } from "@/lib/core/problems";
import { z } from "zod";
import { instrumentDb } from "@/lib/lab/instrument-db";
import { requireLab } from "@/lib/lab/settings";
import { readTimeline, sinceMsSchema } from "@/lib/lab/timeline";
import { userIdSchema } from "@/lib/switch/ids";
import { findUser } from "@/lib/switch/users";
import { parseQuery, respond } from "@/lib/web/http";

const timelineQuerySchema = z.strictObject({ sinceMs: sinceMsSchema, userId: userIdSchema.optional() });

/** The timeline's lanes as JSON (the stream pushes the same lanes as they change). */
export async function GET(request: NextRequest): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const { sinceMs, userId } = parseQuery(request, timelineQuerySchema);
    // Read through the lab's own pool: the timeline answers while the app's pool is exhausted.
    const db = instrumentDb();
    if (userId !== undefined && !(await findUser(db, userId))) throw new UserNotFound(userId);
    return Response.json(await readTimeline(db, { userId, sinceMs }));
  });
}
