import { sql } from "kysely";
import { expect, inject, it } from "vitest";
import { createDb } from "../db/connection";

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
