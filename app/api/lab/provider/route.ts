import { respond } from "@/lib/web/http";
import { requireLab } from "@/lib/lab/settings";
import { fetchProviderState } from "@/lib/provider-sim/lab-client";

export async function GET(): Promise<Response> {
  return respond(async () => {
    requireLab();
    return Response.json(await fetchProviderState());
  });
}
