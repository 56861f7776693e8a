/**
 * The least read of a user's page in a Next.js 16 route handler: one pg statement (the user's primary and
 * identities, as the app's view reads them in one), answered as JSON. A bystander reads it while next-bare's
 * switches run (bench/floor-bystander.ts): what its reads wait for is Next.js's and the machine's, not ours.
 */
import { pool } from "../../../../pool";

const userPage = `
  SELECT users.primary_identity_id, json_agg(json_build_object('id', identities.id, 'label', identities.label)
                                             ORDER BY identities.position) AS identities
    FROM users JOIN identities ON identities.user_id = users.id
   WHERE users.id = $1
   GROUP BY users.id`;

export async function GET(_request: Request, { params }: { params: Promise<{ userId: string }> }): Promise<Response> {
  const { userId } = await params;
  const { rows } = await pool.query({ name: "next_bare_user_page", text: userPage, values: [userId] });
  if (rows.length === 0) return Response.json({ title: "no such user" }, { status: 404 });
  return Response.json(rows[0]);
}
