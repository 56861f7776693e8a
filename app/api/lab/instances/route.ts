import { instances } from "@/lib/lab/instances";
import { requireLab } from "@/lib/lab/settings";
import { respond } from "@/lib/web/http";

/** Which instance answers, and the peers a switch can be relayed to. */
export async function GET(request: Request): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    return Response.json(instances());
  });
}
