import { auditConsistency } from "@/lib/audit";
import { appDb } from "@/lib/db";
import { respond } from "@/lib/http";
import { requireLab } from "@/lib/lab";

export async function GET(): Promise<Response> {
  return respond(async () => {
    requireLab();
    return Response.json(await auditConsistency(appDb()));
  });
}
