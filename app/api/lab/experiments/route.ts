import { experimentCards } from "@/lib/lab/experiments/registry";
import { requireLab } from "@/lib/lab/settings";
import { respond } from "@/lib/web/http";

export async function GET(request: Request): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    return Response.json({ experiments: await experimentCards() });
  });
}
