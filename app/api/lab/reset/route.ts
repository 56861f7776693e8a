import { appDb } from "@/lib/db";
import { respond } from "@/lib/http";
import { requireLab, resetLab } from "@/lib/lab";

export async function POST(): Promise<Response> {
  return respond(async () => {
    requireLab();
    await resetLab(appDb());
    return new Response(null, { status: 204 });
  });
}
