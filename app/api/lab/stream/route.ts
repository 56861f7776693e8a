import type { NextRequest } from "next/server";
import { requireLab } from "@/lib/lab/settings";
import { openLabStream } from "@/lib/lab/stream";
import { respond } from "@/lib/web/http";

export const dynamic = "force-dynamic";

/** The lab's live feed (Server-Sent Events): lanes, leases, audit, settings, pool, provider calls, events. */
export async function GET(request: NextRequest): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const stream = openLabStream(request.headers.get("last-event-id"), request.signal);
    return new Response(stream, {
      headers: {
        "Content-Type": "text/event-stream; charset=utf-8",
        // no-transform: no compression, which would hold messages back.
        "Cache-Control": "no-cache, no-transform",
        "X-Accel-Buffering": "no",
      },
    });
  });
}
