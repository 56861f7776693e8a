import type { Database } from "../../db/schema";
import { leaseLock } from "../lease";

/** The lease that guards a user's identity actions (promote to primary): four columns on `users`. */
export const identityActionLease = leaseLock<Database, "users">(
  {
    table: "users",
    id: "id",
    lockedAt: "identity_action_locked_at",
    lockedUntil: "identity_action_locked_until",
    token: "identity_action_lock_token",
    fence: "identity_action_fence",
    generation: "identity_action_generation",
  },
  // Sent as named prepared statements by the app's pool (db/prepared-statements.ts).
  { preparedName: "users_lease" },
);
