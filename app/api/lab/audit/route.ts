import { auditConsistency } from "@/lib/lab/audit";
import { appDb } from "@/lib/core/db";
import { respond } from "@/lib/web/http";
import { requireLab } from "@/lib/lab/settings";

export async function GET(): Promise<Response> {
  return respond(async () => {
    requireLab();
    return Response.json(await auditConsistency(appDb()));
  });
}
