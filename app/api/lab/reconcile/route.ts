import { appDb } from "@/lib/core/db";
import { requireLab } from "@/lib/lab/settings";
import { appIdentityProvider } from "@/lib/web/app-provider";
import { parseEmptyBody, respond } from "@/lib/web/http";
import { reconcileOnce } from "@/lib/web/switch";

/** One reconciliation round now, on this instance, by the background reconciler's rules. */
export async function POST(request: Request): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    await parseEmptyBody(request);
    return Response.json({ settledUserIds: await reconcileOnce(appDb(), appIdentityProvider) });
  });
}
