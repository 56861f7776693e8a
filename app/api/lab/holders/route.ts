import type { NextRequest } from "next/server";
import { parseOrThrow } from "@/lib/core/validation";
import { holdersLimitSchema, whoHoldsWhat } from "@/lib/lab/holders";
import { instrumentDb } from "@/lib/lab/instrument-db";
import { requireLab } from "@/lib/lab/settings";
import { respond } from "@/lib/web/http";

/** Who holds a lease on the users table now, and the database's time of the read. */
export async function GET(request: NextRequest): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const limit = parseOrThrow(holdersLimitSchema, request.nextUrl.searchParams.get("limit") ?? undefined, "limit");
    // Through the lab's own pool, like the timeline: it answers while the app's pool is exhausted.
    return Response.json(await whoHoldsWhat(instrumentDb(), limit));
  });
}
