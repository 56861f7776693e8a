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

export async function POST(request: NextRequest): Promise<Response> {
  return respond(request, async () => {
    const db = appDb();
    const { userId } = await parseJsonBody(request, bodySchema);
    if (!(await findUser(db, userId))) throw new UserNotFound(userId);
    const response = new NextResponse(null, { status: 204 });
    response.cookies.set(sessionCookieName, await createSessionValue(db, userId), {
      httpOnly: true,
      sameSite: "lax",
      secure: servedOverHttps(request),
      maxAge: sessionTtlSeconds,
      path: "/",
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
    response.cookies.delete(sessionCookieName);
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
