import { appDb } from "@/lib/db";
import { respond } from "@/lib/http";
import { listUsers } from "@/lib/users";

export async function GET(): Promise<Response> {
  return respond(async () => Response.json({ users: await listUsers(appDb()) }));
}
