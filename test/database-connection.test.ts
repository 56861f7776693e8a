import { sql } from "kysely";
import { expect, inject, it } from "vitest";
import { createDb } from "../db/connection";
import { withAnswerTimeout } from "./harness/answer-timeout";

const setting = async (options?: { synchronousCommit: boolean }): Promise<string> => {
  const { db } = createDb(inject("databaseUrl"), 1, options);
  try {
    return (await sql<{ synchronous_commit: string }>`SHOW synchronous_commit`.execute(db)).rows[0]!.synchronous_commit;
  } finally {
    await db.destroy();
  }
};

it("commits wait for the disk unless a pool is made for writes that may be lost (the lab's timeline)", async () => {
  expect(await setting()).toBe("on");
  expect(await setting({ synchronousCommit: false })).toBe("off");
});

it("a statement unanswered past the answer timeout is cancelled on a connection of its own, which goes on serving", async () => {
  // A server that is up answers the cancel: the wait ends as query_canceled (a 503), and the connection stays.
  const { sameBackend } = await withAnswerTimeout(inject("databaseUrl"), 300, async (db) => {
    await expect(sql`SELECT pg_sleep(30)`.execute(db)).rejects.toMatchObject({ code: "57014" });
  });
  expect(sameBackend).toBe(true);
});
