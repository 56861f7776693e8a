import { experimentCards } from "@/lib/lab/experiments/registry";
import { requireLab } from "@/lib/lab/settings";
import { respond } from "@/lib/web/http";

export async function GET(): Promise<Response> {
  return respond(async () => {
    requireLab();
    return Response.json({ experiments: experimentCards() });
  });
}
