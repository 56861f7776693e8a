import { instances } from "@/lib/lab/instances";
import { requireLab } from "@/lib/lab/settings";
import { respond } from "@/lib/web/http";

/** Which instance answers, the peers a switch can be relayed to, and the database's nodes. */
export async function GET(request: Request): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    return Response.json(await instances());
  });
}
