import { poolStats } from "@/lib/core/db";
import { respond } from "@/lib/web/http";
import { requireLab } from "@/lib/lab/settings";

// Answers from memory, without a connection: it must answer while the pool is exhausted.
export async function GET(request: Request): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    return Response.json(poolStats());
  });
}
