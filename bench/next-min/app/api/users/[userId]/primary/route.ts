/**
 * The least a switch route can be in Next.js 16: the same URL and body as the product's, read with
 * `request.json()`, one pg statement (a write, so one durable commit), and a JSON answer. What the app costs
 * above this server is ours; this server's cost is Next.js's own and the driver's (bench/app-cpu.ts).
 */
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 16) });

export async function POST(request: Request, { params }: { params: Promise<{ userId: string }> }): Promise<Response> {
  const { userId } = await params;
  const body = (await request.json()) as { identityId?: unknown };
  if (typeof body.identityId !== "string") return Response.json({ title: "identityId is required" }, { status: 400 });
  // It changes nothing: the bench's other servers switch the same users, and read their primary from the answer.
  const { rows } = await pool.query<{ primary_identity_id: string }>({
    name: "next_min_touch",
    text: "UPDATE users SET version = version WHERE id = $1 RETURNING primary_identity_id",
    values: [userId],
  });
  if (rows.length === 0) return Response.json({ title: "no such user" }, { status: 404 });
  return Response.json({ primaryIdentityId: rows[0]!.primary_identity_id, changed: false });
}
