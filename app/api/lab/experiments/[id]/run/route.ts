import type { NextRequest } from "next/server";
import { z } from "zod";
import { appDb } from "@/lib/core/db";
import { parseOrThrow } from "@/lib/core/validation";
import { runExperiment } from "@/lib/lab/experiments/runner";
import { requireLab } from "@/lib/lab/settings";
import { appIdentityProvider as provider } from "@/lib/web/app-provider";
import { parseEmptyBody, respond } from "@/lib/web/http";

const idSchema = z
  .string()
  .regex(/^[a-z0-9-]{1,80}$/, "must be an experiment's id (lowercase letters, digits, dashes)");

/** Runs one experiment to its end (each within 30 s) and answers what it measured. */
export async function POST(
  request: NextRequest,
  { params }: RouteContext<"/api/lab/experiments/[id]/run">,
): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const id = parseOrThrow(idSchema, (await params).id, "id");
    await parseEmptyBody(request);
    return Response.json(await runExperiment(appDb(), provider, id));
  });
}
