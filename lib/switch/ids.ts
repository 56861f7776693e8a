/** What the ids a caller names look like: checked at the edge, before anything reads them. */
import { z } from "zod";

export const userIdSchema = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,62}$/, "must be a demo user's id (lowercase letters, digits, dashes)");
export const identityIdSchema = z
  .string()
  .max(255)
  .regex(/^[a-z0-9-]+\|[^|\s]+$/, 'must look like "provider|providerUserId", e.g. "github|8812"');
