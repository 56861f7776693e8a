import { poolStats } from "@/lib/db";
import { respond } from "@/lib/http";
import { requireLab } from "@/lib/lab";

// Answers from memory, without a connection: it must answer while the pool is exhausted.
export async function GET(): Promise<Response> {
  return respond(async () => {
    requireLab();
    return Response.json(poolStats());
  });
}
