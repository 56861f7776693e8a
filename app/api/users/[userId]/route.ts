import type { NextRequest } from "next/server";
import { z } from "zod";
import { appDb } from "@/lib/core/db";
import { NotSignedIn, UserNotFound } from "@/lib/core/problems";
import { parseOrThrow } from "@/lib/core/validation";
import { userIdSchema } from "@/lib/switch/ids";
import { getUserView } from "@/lib/switch/user-view";
import { appIdentityProvider as provider } from "@/lib/web/app-provider";
import { parseJsonBody, respond } from "@/lib/web/http";
import { requireSessionFor, sessionCookieName, sessionFor, verifiedSessionId } from "@/lib/web/session";
import { rename } from "@/lib/web/switch";

export async function GET(request: NextRequest, { params }: RouteContext<"/api/users/[userId]">): Promise<Response> {
  return respond(request, async () => {
    const db = appDb();
    const userId = parseOrThrow(userIdSchema, (await params).userId, "userId");
    const sessionId = await verifiedSessionId(db, request.cookies.get(sessionCookieName)?.value);
    if (!sessionId) throw new NotSignedIn();
    // The session's row is checked by the view's own statement.
    const view = await getUserView(db, userId, sessionFor(sessionId, userId));
    if (!view) throw new UserNotFound(userId);
    return Response.json(view);
  });
}

// A name is shown on every page: a control character (a bell, a line break), a line or paragraph separator or a
// direction override (which turns the text after it around) is no part of one. Other format characters are: the
// zero-width joiner holds emoji together.
const renameSchema = z.strictObject({
  displayName: z
    .string()
    .trim()
    .min(1)
    .max(80)
    .regex(
      /^[^\p{Cc}\p{Zl}\p{Zp}\u202A-\u202E\u2066-\u2069]*$/u,
      "must not contain control characters, line or paragraph separators or direction overrides",
    ),
});

/** Rename: the other writer of the user row (no lease; see lib/switch/rename.ts). */
export async function PATCH(request: NextRequest, { params }: RouteContext<"/api/users/[userId]">): Promise<Response> {
  return respond(request, async () => {
    const db = appDb();
    const userId = parseOrThrow(userIdSchema, (await params).userId, "userId");
    await requireSessionFor(db, request.cookies.get(sessionCookieName)?.value, userId);
    const { displayName } = await parseJsonBody(request, renameSchema);
    return Response.json(await rename(db, provider, { userId, displayName }));
  });
}
