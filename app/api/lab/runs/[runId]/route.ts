import type { NextRequest } from "next/server";
import { appDb } from "@/lib/core/db";
import { parseOrThrow } from "@/lib/core/validation";
import { readRun, runIdSchema } from "@/lib/lab/experiments/runs";
import { requireLab } from "@/lib/lab/settings";
import { respond } from "@/lib/web/http";

/** A saved experiment run, whole: for its page to replay it, or to export it. */
export async function GET(request: NextRequest, { params }: RouteContext<"/api/lab/runs/[runId]">): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const runId = parseOrThrow(runIdSchema, (await params).runId, "runId");
    return Response.json(await readRun(appDb(), runId));
  });
}
