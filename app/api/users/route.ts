import { appDb } from "@/lib/core/db";
import { respond } from "@/lib/web/http";
import { listUsers } from "@/lib/switch/users";

export async function GET(): Promise<Response> {
  return respond(async () => Response.json({ users: await listUsers(appDb()) }));
}
