import { respond } from "@/lib/web/http";
import { requireLab } from "@/lib/lab/settings";
import { labPresets } from "@/lib/lab/presets";

/** Named provider set-ups; apply one with `PUT /api/lab` and its `settings`. */
export async function GET(request: Request): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    return Response.json({ presets: labPresets });
  });
}
