import type { NextRequest } from "next/server";
import { z } from "zod";
import { holdersLimitSchema, whoHoldsWhat } from "@/lib/lab/holders";
import { instrumentDb } from "@/lib/lab/instrument-db";
import { requireLab } from "@/lib/lab/settings";
import { parseQuery, respond } from "@/lib/web/http";

const holdersQuerySchema = z.strictObject({ limit: holdersLimitSchema });

/** Who holds a lease on the users table now, and the database's time of the read. */
export async function GET(request: NextRequest): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const { limit } = parseQuery(request, holdersQuerySchema);
    // Through the lab's own pool, like the timeline: it answers while the app's pool is exhausted.
    return Response.json(await whoHoldsWhat(instrumentDb(), limit));
  });
}
