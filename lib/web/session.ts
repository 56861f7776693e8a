/**
 * Signed session values: `<userId>.<HMAC-SHA256>`. The key is made by the database at migration, so
 * every app instance on the same database accepts the same sessions without configuration.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { NotSignedIn, NotYourUser } from "../core/problems";
import { userIdSchema } from "../switch/users";

export const sessionCookieName = "lab_session";

const keyCache = new WeakMap<Kysely<Database>, Promise<string>>();

function sessionKey(db: Kysely<Database>): Promise<string> {
  let key = keyCache.get(db);
  if (!key) {
    key = db
      .selectFrom("app_secret")
      .select("session_key")
      .executeTakeFirstOrThrow()
      .then((row) => row.session_key);
    keyCache.set(db, key);
  }
  return key;
}

const sign = (key: string, userId: string): string => createHmac("sha256", key).update(userId).digest("base64url");

export async function createSessionValue(db: Kysely<Database>, userId: string): Promise<string> {
  return `${userId}.${sign(await sessionKey(db), userId)}`;
}

/** The signed-in user's id, or null for a missing, malformed or forged value. */
export async function readSessionValue(db: Kysely<Database>, value: string | undefined): Promise<string | null> {
  if (!value) return null;
  const dot = value.lastIndexOf(".");
  const userId = value.slice(0, dot);
  if (dot < 1 || !userIdSchema.safeParse(userId).success) return null;
  const expected = Buffer.from(sign(await sessionKey(db), userId));
  const given = Buffer.from(value.slice(dot + 1));
  return expected.length === given.length && timingSafeEqual(expected, given) ? userId : null;
}

/** Authorizes a call on `userId`'s resources: 401 without a session, 403 for another user's id. */
export async function requireSessionFor(
  db: Kysely<Database>,
  sessionValue: string | undefined,
  userId: string,
): Promise<void> {
  const sessionUserId = await readSessionValue(db, sessionValue);
  if (!sessionUserId) throw new NotSignedIn();
  if (sessionUserId !== userId) throw new NotYourUser();
}
