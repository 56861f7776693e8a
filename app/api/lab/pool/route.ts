import { poolStats } from "@/lib/core/db";
import { respond } from "@/lib/web/http";
import { requireLab } from "@/lib/lab/settings";

// Answers from memory, without a connection: it must answer while the pool is exhausted.
export async function GET(): Promise<Response> {
  return respond(async () => {
    requireLab();
    return Response.json(poolStats());
  });
}
