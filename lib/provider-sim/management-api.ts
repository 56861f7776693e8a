/**
 * The Management API endpoints' own work over the provider's state: read an account, unlink an identity,
 * link an account, update a profile. Each checks its body as Auth0 does and answers in Auth0's shape.
 */
import type { Kysely } from "kysely";
import { z } from "zod";
import type { Perform } from "./simulated-call";
import type { IdpDatabase } from "./schema";
import { getAccount, IdpError, linkAccount, unlinkIdentity } from "./store";

const linkBodySchema = z.object({ provider: z.string().min(1), user_id: z.string().min(1) });
const renameBodySchema = z.object({ name: z.string().min(1).max(300) });

const jsonBody = (request: Request): Promise<unknown> =>
  request
    .clone()
    .json()
    .catch(() => null);

const invalidBody = (message: string) => new IdpError(400, "Bad Request", message, "invalid_body");

export const managementApi = (db: Kysely<IdpDatabase>): Record<"get" | "unlink" | "link" | "rename", Perform> => ({
  get: async (_request, params, fencing) => ({ status: 200, body: await getAccount(db, params.id!, fencing) }),
  unlink: async (_request, params, fencing) => ({
    status: 200,
    body: await unlinkIdentity(db, params.primaryId!, params.provider!, params.userId!, fencing),
  }),
  link: async (request, params, fencing) => {
    const body = linkBodySchema.safeParse(await jsonBody(request));
    if (!body.success) throw invalidBody("Payload validation error: provider and user_id are required");
    return {
      status: 201,
      body: await linkAccount(db, params.primaryId!, body.data.provider, body.data.user_id, fencing),
    };
  },
  // Profile fields are not kept by the simulator: the call is checked, slowed, broken and logged like the others.
  rename: async (request, params, fencing) => {
    const body = renameBodySchema.safeParse(await jsonBody(request));
    if (!body.success) throw invalidBody("Payload validation error: name is required");
    return { status: 200, body: { ...(await getAccount(db, params.id!, fencing)), name: body.data.name } };
  },
});
