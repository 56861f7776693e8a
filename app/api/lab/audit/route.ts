import { auditConsistency } from "@/lib/lab/audit";
import { appDb } from "@/lib/core/db";
import { respond } from "@/lib/web/http";
import { requireLab } from "@/lib/lab/settings";

export async function GET(request: Request): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    return Response.json(await auditConsistency(appDb()));
  });
}
