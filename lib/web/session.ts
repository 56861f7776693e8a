/**
 * Sessions: a row per sign-in (`sessions`), and a cookie value `<sessionId>.<expiresAt>.<HMAC-SHA256>`
 * naming it. The HMAC's key is made by the database at migration, so every app instance on the same
 * database accepts the same sessions without configuration. A value works until its expiry (signed, so
 * it cannot be extended) and while its row exists: signing out deletes the row, so a replayed cookie
 * is refused.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { param } from "@lease-lock-lab/lease";
import type { Database } from "../../db/schema";
import { NotSignedIn, NotYourUser } from "../core/problems";
import { requirement, type Requirement } from "../switch/guard";

export const sessionCookieName = "lab_session";

/** How long a sign-in lasts: a working day. */
export const sessionTtlSeconds = 12 * 60 * 60;

const keyCache = new WeakMap<Kysely<Database>, Promise<string>>();

function sessionKey(db: Kysely<Database>): Promise<string> {
  let key = keyCache.get(db);
  if (!key) {
    key = db
      .selectFrom("app_secret")
      .select("session_key")
      .executeTakeFirstOrThrow()
      .then((row) => row.session_key);
    // A failed read (the database unreachable) is not kept: the next request tries again.
    key.catch(() => keyCache.delete(db));
    keyCache.set(db, key);
  }
  return key;
}

const sign = (key: string, payload: string): string => createHmac("sha256", key).update(payload).digest("base64url");

/** Signs `userId` in: a new session row, and the cookie value naming it. */
export async function createSessionValue(db: Kysely<Database>, userId: string): Promise<string> {
  await db
    .deleteFrom("sessions")
    .where("expires_at", "<", sql<Date>`now()`)
    .execute();
  const session = await db
    .insertInto("sessions")
    .values({ user_id: userId, expires_at: sql<Date>`now() + make_interval(secs => ${sessionTtlSeconds})` })
    .returning(["id", "expires_at"])
    .executeTakeFirstOrThrow();
  const payload = `${session.id}.${Math.floor(session.expires_at.getTime() / 1000)}`;
  return `${payload}.${sign(await sessionKey(db), payload)}`;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The session id a value names, or null for a malformed, forged or expired value (its row is not read). */
export async function verifiedSessionId(db: Kysely<Database>, value: string | undefined): Promise<string | null> {
  const [sessionId, expiresAt, signature, ...rest] = value?.split(".") ?? [];
  if (!sessionId || !expiresAt || !signature || rest.length > 0) return null;
  if (!uuidPattern.test(sessionId) || !/^\d{1,12}$/.test(expiresAt)) return null;
  const expected = Buffer.from(sign(await sessionKey(db), `${sessionId}.${expiresAt}`));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  return Number(expiresAt) * 1000 > Date.now() ? sessionId : null;
}

/** The signed-in user's id, or null for a missing, malformed, forged, expired or signed-out value. */
export async function readSessionValue(db: Kysely<Database>, value: string | undefined): Promise<string | null> {
  const sessionId = await verifiedSessionId(db, value);
  if (!sessionId) return null;
  const session = await db
    .selectFrom("sessions")
    .select("user_id")
    .where("id", "=", sessionId)
    .where("expires_at", ">", sql<Date>`now()`)
    .executeTakeFirst();
  return session?.user_id ?? null;
}

/** Signs out: the session's row goes, so the value no longer works anywhere, even replayed. */
export async function revokeSessionValue(db: Kysely<Database>, value: string | undefined): Promise<void> {
  const sessionId = await verifiedSessionId(db, value);
  if (sessionId) await db.deleteFrom("sessions").where("id", "=", sessionId).execute();
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

const sessionIsTheUsers = sql<boolean>`EXISTS (SELECT 1 FROM sessions WHERE id = ${param("sessionId")}
                                               AND user_id = ${param("sessionUserId")} AND expires_at > now())`;

/**
 * The requirement, for a statement that checks it with everything else, that session `sessionId` is live
 * and `userId`'s; when it is not, 401 (signed out, expired) or 403 (another user's).
 */
export const sessionFor = (sessionId: string, userId: string): Requirement =>
  requirement(sessionIsTheUsers, { sessionId, sessionUserId: userId }, async (db) => {
    const session = await db
      .selectFrom("sessions")
      .select("user_id")
      .where("id", "=", sessionId)
      .where("expires_at", ">", sql<Date>`now()`)
      .executeTakeFirst();
    return session ? new NotYourUser() : new NotSignedIn();
  });
