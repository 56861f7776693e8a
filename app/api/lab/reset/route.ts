import { appDb } from "@/lib/core/db";
import { parseEmptyBody, respond } from "@/lib/web/http";
import { resetLabOutsideRuns } from "@/lib/lab/reset";
import { requireLab } from "@/lib/lab/settings";

export async function POST(request: Request): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    await parseEmptyBody(request);
    await resetLabOutsideRuns(appDb());
    return new Response(null, { status: 204 });
  });
}
