import type { NextRequest } from "next/server";
import { UserNotFound } from "@/lib/core/problems";
import { parseOrThrow } from "@/lib/core/validation";
import { instrumentDb } from "@/lib/lab/instrument-db";
import { requireLab } from "@/lib/lab/settings";
import { readTimeline, sinceMsSchema } from "@/lib/lab/timeline";
import { userIdSchema } from "@/lib/switch/ids";
import { findUser } from "@/lib/switch/users";
import { respond } from "@/lib/web/http";

/** The timeline's lanes as JSON (the stream pushes the same lanes as they change). */
export async function GET(request: NextRequest): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const params = request.nextUrl.searchParams;
    const sinceMs = parseOrThrow(sinceMsSchema, params.get("sinceMs") ?? undefined, "sinceMs");
    const userId = params.has("userId") ? parseOrThrow(userIdSchema, params.get("userId"), "userId") : undefined;
    // Read through the lab's own pool: the timeline answers while the app's pool is exhausted.
    const db = instrumentDb();
    if (userId !== undefined && !(await findUser(db, userId))) throw new UserNotFound(userId);
    return Response.json(await readTimeline(db, { userId, sinceMs }));
  });
}
