import { respond } from "@/lib/web/http";
import { requireLab } from "@/lib/lab/settings";
import { fetchProviderState } from "@/lib/provider-sim/lab-client";

export async function GET(request: Request): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    return Response.json(await fetchProviderState());
  });
}
