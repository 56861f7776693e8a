/**
 * The least switch with the lease's guarantees (bench/bare-switch.ts, `bare`'s own) inside a minimal Next.js 16
 * route handler, read and answered as `next-min` is. What it costs over `next-min` is the machine's and
 * Next.js's cost of the two more statements and the two provider calls no switch can do without; what the app
 * costs over it is ours (bench/app-cpu.ts). Asked with `unlockedHeader`, the same switch without a lock (the
 * floors' `next-bare, none`).
 */
import { bareSwitch, unlockedHeader, unlockedSwitch } from "../../../../../../bare-switch";
import { pool } from "../../../../../pool";

const leased = bareSwitch(pool, process.env.IDP_BASE_URL ?? "");
const unlocked = unlockedSwitch(pool, process.env.IDP_BASE_URL ?? "");

export async function POST(request: Request, { params }: { params: Promise<{ userId: string }> }): Promise<Response> {
  const { userId } = await params;
  const body = (await request.json()) as { identityId?: unknown };
  if (typeof body.identityId !== "string") return Response.json({ title: "identityId is required" }, { status: 400 });
  const promote = request.headers.get(unlockedHeader) === "none" ? unlocked : leased;
  const [status, answer] = await promote(userId, body.identityId);
  return Response.json(answer, { status });
}
