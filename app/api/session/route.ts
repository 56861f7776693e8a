import { NextResponse, type NextRequest } from "next/server";
import { z } from "zod";
import { appDb } from "@/lib/core/db";
import { parseEmptyBody, parseJsonBody, respond, servedOverHttps } from "@/lib/web/http";
import { NotSignedIn, UserNotFound } from "@/lib/core/problems";
import {
  createSessionValue,
  readSessionValue,
  revokeSessionValue,
  sessionCookieName,
  sessionTtlSeconds,
} from "@/lib/web/session";
import { userIdSchema } from "@/lib/switch/ids";
import { findUser } from "@/lib/switch/users";

const bodySchema = z.strictObject({ userId: userIdSchema });

const cookieAttributes = (request: NextRequest) =>
  ({ httpOnly: true, sameSite: "lax", secure: servedOverHttps(request), path: "/" }) as const;

export async function POST(request: NextRequest): Promise<Response> {
  return respond(request, async () => {
    const db = appDb();
    const { userId } = await parseJsonBody(request, bodySchema);
    if (!(await findUser(db, userId))) throw new UserNotFound(userId);
    const response = new NextResponse(null, { status: 204 });
    response.cookies.set(sessionCookieName, await createSessionValue(db, userId), {
      ...cookieAttributes(request),
      maxAge: sessionTtlSeconds,
    });
    return response;
  });
}

/** Signs out: the session is revoked (its cookie value stops working, even replayed) and the cookie cleared. */
export async function DELETE(request: NextRequest): Promise<Response> {
  return respond(request, async () => {
    await parseEmptyBody(request);
    await revokeSessionValue(appDb(), request.cookies.get(sessionCookieName)?.value);
    const response = new NextResponse(null, { status: 204 });
    // Cleared with the attributes it was set with: a cookie is one by its name, path and domain, and the
    // clearing header says as much of it as the setting one did.
    response.cookies.set(sessionCookieName, "", { ...cookieAttributes(request), maxAge: 0 });
    return response;
  });
}

/** Who is signed in here (an extension of the contract, for the page). */
export async function GET(request: NextRequest): Promise<Response> {
  return respond(request, async () => {
    const userId = await readSessionValue(appDb(), request.cookies.get(sessionCookieName)?.value);
    if (!userId) throw new NotSignedIn();
    return Response.json({ userId });
  });
}
