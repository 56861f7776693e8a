import { sql } from "kysely";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createDb } from "../db/connection";
import { freshLabEachTest } from "./fresh-lab";
import { utf8Header, type Answer } from "./harness/http-client";

const { app, session } = freshLabEachTest({ strategy: "lease", reconcileAfterMs: null, provider: { latencyMs: 20 } }, [
  "ada",
  "alan",
]);
const { db } = createDb(inject("databaseUrl"), 2);
afterAll(() => db.destroy());

const withKey = (key: string) => ({ "Idempotency-Key": key });

/** What every answer to a repeat of one key may be: the one run's 200, or 409 operation-in-progress. */
function expectAllowedAnswers(answers: Answer[]) {
  for (const answer of answers) {
    expect([200, 409], JSON.stringify(answer.body)).toContain(answer.status);
    if (answer.status === 409) {
      expect(answer.body.type).toMatch(/\/operation-in-progress$/);
      expect(answer.body).toHaveProperty("expiresAt");
      if (answer.body.expiresAt !== null) expect(Date.parse(answer.body.expiresAt)).not.toBeNaN();
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
  }
  // At most one run: every 200 is the same answer.
  const ran = new Set(answers.filter((answer) => answer.status === 200).map((answer) => answer.body.operationId));
  expect(ran.size).toBeLessThanOrEqual(1);
}

describe("concurrent requests with one Idempotency-Key", () => {
  it("50 at once while another switch holds the lease, 3 rounds: never a 5xx, only 409s naming when to retry", async () => {
    await app.configure({ provider: { latencyMs: 400 } });
    const targets = ["github|8812", "auth0|ada-email", "apple|001122.ada"];
    for (const [round, target] of targets.entries()) {
      const holder = session.ada.promote("ada", target);
      await expect.poll(() => session.ada.leaseHeld("ada")).toBe(true);
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => session.ada.promote("ada", "google-oauth2|104423", withKey(`held-${round}`))),
      );
      expectAllowedAnswers(answers);
      // The claims refused by the lease are deleted: those repeats were refused by the lease too, with its expiry.
      expect(answers.some((answer) => answer.status === 409 && answer.body.expiresAt !== null)).toBe(true);
      expect((await holder).status).toBe(200);
    }
  });

  it("50 at once with the lease free: the switch runs once, and a later repeat gets its answer", async () => {
    await app.configure({ provider: { latencyMs: 200 } });
    for (const round of [1, 2, 3]) {
      const target = round % 2 === 1 ? "github|8812" : "google-oauth2|104423";
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => session.ada.promote("ada", target, withKey(`free-${round}`))),
      );
      expectAllowedAnswers(answers);
      // Nobody else held the lease: each 409 says the key's first request still runs.
      for (const refused of answers.filter((answer) => answer.status === 409))
        expect(refused.body.detail).toMatch(/first request with this Idempotency-Key is still running/);
      const ran = answers.find((answer) => answer.status === 200);
      expect(ran?.body).toMatchObject({ primaryIdentityId: target, changed: true });
      expect((await session.ada.promote("ada", target, withKey(`free-${round}`))).body).toEqual(ran!.body);
    }
    // Three switches, each two provider calls, whatever the repeats.
    expect(await app.calls()).toHaveLength(6);
  });
});

describe("an Idempotency-Key record is kept 24 hours", () => {
  const ageRecord = (userId: string, key: string, hours: number) =>
    db
      .updateTable("idempotency_records")
      .set({ created_at: sql<Date>`now() - ${hours} * interval '1 hour'` })
      .where("user_id", "=", userId)
      .where("key", "=", key)
      .execute();
  const keysOf = async (userId: string) =>
    (await db.selectFrom("idempotency_records").select("key").where("user_id", "=", userId).execute())
      .map((row) => row.key)
      .sort();

  it("an expired record is neither answered nor in the way; a claim deletes expired records", async () => {
    const first = await session.ada.promote("ada", "github|8812", withKey("daily"));
    expect(first.status).toBe(200);
    // Another user's records: one a day old, one an hour old.
    const grace = await app.signedIn("grace");
    expect((await grace.promote("grace", "github|1906", withKey("old"))).status).toBe(200);
    expect((await grace.promote("grace", "google-oauth2|77", withKey("recent"))).status).toBe(200);
    await ageRecord("grace", "old", 25);
    await ageRecord("grace", "recent", 1);

    // Within 24 hours, the same key with another body is refused.
    await ageRecord("ada", "daily", 23);
    expect((await session.ada.promote("ada", "auth0|ada-email", withKey("daily"))).status).toBe(422);

    // After them, it is a new request: it runs, and its answer is the one kept.
    await ageRecord("ada", "daily", 25);
    const fresh = await session.ada.promote("ada", "auth0|ada-email", withKey("daily"));
    expect(fresh.status).toBe(200);
    expect(fresh.body).toMatchObject({ primaryIdentityId: "auth0|ada-email", changed: true });
    expect(fresh.body.operationId).not.toBe(first.body.operationId);
    expect((await session.ada.promote("ada", "auth0|ada-email", withKey("daily"))).body).toEqual(fresh.body);

    expect(await keysOf("grace")).toEqual(["recent"]);
    expect(await keysOf("ada")).toEqual(["daily"]);
  });
});

describe("a key is stored exactly as sent", () => {
  it.each(["été", "€-1", "鍵🔑"])("%s, sent as UTF-8, is the same key, stored as it reads", async (key) => {
    const first = await session.ada.promote("ada", "github|8812", withKey(utf8Header(key)));
    expect(first.status).toBe(200);
    const repeat = await session.ada.promote("ada", "github|8812", withKey(utf8Header(key)));
    expect(repeat.body).toEqual(first.body);
    expect(await app.calls()).toHaveLength(2);
    expect(await keysOf()).toEqual([key]);
  });

  it("bytes that are not UTF-8 are read one a byte (latin1), as HTTP's older rule has it", async () => {
    expect((await session.ada.promote("ada", "github|8812", withKey("\u00e9t\u00e9"))).status).toBe(200);
    expect(await keysOf()).toEqual(["été"]);
  });

  const keysOf = async () =>
    (await db.selectFrom("idempotency_records").select("key").where("user_id", "=", "ada").execute()).map(
      (row) => row.key,
    );
});

describe("a key is the user's", () => {
  it("another user's session naming the user is refused (403) and learns nothing of the key's answer or body", async () => {
    const first = await session.alan.promote("alan", "apple|000912.alan", withKey("alans"));
    expect(first.status).toBe(200);
    // The same body would replay alan's answer, another body would say the key was used: each is a 403, as
    // the same request without a key is.
    for (const identityId of ["apple|000912.alan", "auth0|alan-email"]) {
      const answer = await session.ada.promote("alan", identityId, withKey("alans"));
      expect(answer.status, JSON.stringify(answer.body)).toBe(403);
      expect(answer.body.type).toMatch(/\/forbidden$/);
    }
    // The record is still alan's: his repeat gets his answer, and nothing ran again.
    expect((await session.alan.promote("alan", "apple|000912.alan", withKey("alans"))).body).toEqual(first.body);
    expect(await app.calls()).toHaveLength(2);
  });
});
