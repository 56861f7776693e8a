import { appDb } from "@/lib/core/db";
import { respond } from "@/lib/web/http";
import { listUsers } from "@/lib/switch/users";

export async function GET(request: Request): Promise<Response> {
  return respond(request, async () => Response.json({ users: await listUsers(appDb()) }));
}
