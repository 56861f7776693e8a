import { appDb } from "@/lib/core/db";
import { parseEmptyBody, respond } from "@/lib/web/http";
import { resetLab } from "@/lib/lab/reset";
import { requireLab } from "@/lib/lab/settings";

export async function POST(request: Request): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    await parseEmptyBody(request);
    await resetLab(appDb());
    return new Response(null, { status: 204 });
  });
}
