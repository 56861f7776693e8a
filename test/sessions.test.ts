import { createHmac } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDb } from "../db/connection";
import { appClient } from "./harness/http-client";

const appUrl = inject("appUrl");
const app = appClient(appUrl);
const { db } = createDb(inject("databaseUrl"), 1);

beforeAll(() => app.reset());
afterAll(() => db.destroy());

async function signIn(headers: Record<string, string> = {}): Promise<{ cookie: string; setCookie: string }> {
  const response = await fetch(`${appUrl}/api/session`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify({ userId: "ada" }),
  });
  expect(response.status).toBe(204);
  const setCookie = response.headers.getSetCookie()[0]!;
  return { cookie: setCookie.split(";")[0]!, setCookie };
}

const readAs = (cookie: string) => appClient(appUrl, cookie).get("/api/users/ada");

describe("sessions", () => {
  it("the cookie is httpOnly, SameSite=Lax and lasts 12 hours; Secure when served over https", async () => {
    const { setCookie } = await signIn();
    expect(setCookie).toMatch(/; HttpOnly/i);
    expect(setCookie).toMatch(/; SameSite=Lax/i);
    expect(setCookie).toMatch(/; Max-Age=43200/);
    expect(setCookie).not.toMatch(/; Secure/i);
    expect((await signIn({ "X-Forwarded-Proto": "https" })).setCookie).toMatch(/; Secure/i);
  });

  it("signing out revokes the session: the same cookie replayed afterwards is a 401", async () => {
    const { cookie } = await signIn();
    const other = await signIn();
    expect((await readAs(cookie)).status).toBe(200);

    const signOut = await appClient(appUrl, cookie).call("DELETE", "/api/session");
    expect(signOut.status).toBe(204);
    const cleared = signOut.headers.getSetCookie()[0];
    // Cleared with the attributes it was set with.
    expect(cleared).toMatch(/^lab_session=;/);
    for (const attribute of [/; Path=\//, /; Max-Age=0/, /; HttpOnly/i, /; SameSite=Lax/i])
      expect(cleared).toMatch(attribute);

    for (const path of ["/api/users/ada", "/api/session"]) {
      const replayed = await appClient(appUrl, cookie).get(path);
      expect(replayed.status).toBe(401);
      expect(replayed.headers.get("content-type")).toBe("application/problem+json");
    }
    // Only that sign-in ends: another session of the same user goes on.
    expect((await readAs(other.cookie)).status).toBe(200);
  });

  it("an expired session is a 401, whether its row or its signed value says so", async () => {
    const { cookie } = await signIn();
    const [sessionId] = cookie.slice("lab_session=".length).split(".");
    await db
      .updateTable("sessions")
      .set({ expires_at: sql<Date>`now() - interval '1 second'` })
      .where("id", "=", sessionId!)
      .execute();
    expect((await readAs(cookie)).status).toBe(401);

    // A value signed with the right key but an expiry in the past, for a row that has not expired.
    const { cookie: fresh } = await signIn();
    const [freshId] = fresh.slice("lab_session=".length).split(".");
    const { session_key: key } = await db.selectFrom("app_secret").select("session_key").executeTakeFirstOrThrow();
    const payload = `${freshId}.${Math.floor(Date.now() / 1000) - 1}`;
    const expired = `lab_session=${payload}.${createHmac("sha256", key).update(payload).digest("base64url")}`;
    expect((await readAs(expired)).status).toBe(401);
    expect((await readAs(fresh)).status).toBe(200);
  });

  it("a value whose expiry was pushed later no longer matches its signature: 401", async () => {
    const { cookie } = await signIn();
    const [id, expiresAt, signature] = cookie.slice("lab_session=".length).split(".");
    expect((await readAs(`lab_session=${id}.${Number(expiresAt) + 3600}.${signature}`)).status).toBe(401);
  });
});
