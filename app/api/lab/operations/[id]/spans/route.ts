import type { NextRequest } from "next/server";
import { z } from "zod";
import { parseOrThrow } from "@/lib/core/validation";
import { operationSpans } from "@/lib/lab/recent-spans";
import { requireLab } from "@/lib/lab/settings";
import { respond } from "@/lib/web/http";

/** An operation's finished spans, as this instance remembers them: the lane's waterfall. */
export async function GET(
  request: NextRequest,
  { params }: RouteContext<"/api/lab/operations/[id]/spans">,
): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    // A UUID in any case names one operation: ids are kept as PostgreSQL writes them, in lower case.
    const operationId = parseOrThrow(z.uuid().toLowerCase(), (await params).id, "id");
    return Response.json({ operationId, spans: await operationSpans(operationId) });
  });
}
