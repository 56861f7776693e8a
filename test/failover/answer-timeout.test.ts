import { sql } from "kysely";
import { expect, inject, it } from "vitest";
import { CommitNotReplicated } from "../../db/connection";
import { operate } from "../../lib/lab/database-nodes";
import { withAnswerTimeout } from "../harness/answer-timeout";

const replication = (action: "pause" | "resume") =>
  operate("POST", `/replication/${action}`, undefined, inject("failoverOperatorUrl"));

it("a commit waiting for a standby that stopped receiving WAL is cancelled at the answer timeout, and its backend serves on", async () => {
  await replication("pause");
  try {
    // statement_timeout never ends a commit's wait for the standby: only a cancel does, and it says so as a warning.
    const { sameBackend } = await withAnswerTimeout(inject("databaseUrl"), 1_000, async (db) => {
      await expect(
        sql`UPDATE users SET display_name = display_name WHERE id = 'ada'`.execute(db),
      ).rejects.toBeInstanceOf(CommitNotReplicated);
    });
    expect(sameBackend).toBe(true);
  } finally {
    await replication("resume");
  }
});
