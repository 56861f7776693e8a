import type { NextRequest } from "next/server";
import { z } from "zod";
import { appDb } from "@/lib/core/db";
import { importRun } from "@/lib/lab/experiments/runs";
import { requireLab } from "@/lib/lab/settings";
import { parseJsonBody, respond } from "@/lib/web/http";

/** Imports an exported run (its JSON file) as a new saved run: 201 with the run and its new id. */
export async function POST(request: NextRequest): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const run = await importRun(appDb(), await parseJsonBody(request, z.unknown()));
    return Response.json(run, { status: 201, headers: { Location: `/api/lab/runs/${run.id}` } });
  });
}
