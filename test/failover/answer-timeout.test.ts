import { sql } from "kysely";
import { expect, inject, it } from "vitest";
import { CommitNotReplicated, createDb, databaseTimeouts } from "../../db/connection";
import { operate } from "../../lib/lab/database-nodes";

const replication = (action: "pause" | "resume") =>
  operate("POST", `/replication/${action}`, undefined, inject("failoverOperatorUrl"));

it("a commit waiting for a standby that stopped receiving WAL is cancelled at the answer timeout, and its backend serves on", async () => {
  const { db } = createDb(inject("databaseUrl"), 1);
  const answerMs = databaseTimeouts.answerMs;
  const backend = async () => (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db)).rows[0]!.pid;
  try {
    const before = await backend();
    await replication("pause");
    // statement_timeout never ends a commit's wait for the standby: only a cancel does, and it says so as a warning.
    databaseTimeouts.answerMs = 1_000;
    await expect(sql`UPDATE users SET display_name = display_name WHERE id = 'ada'`.execute(db)).rejects.toBeInstanceOf(
      CommitNotReplicated,
    );
    databaseTimeouts.answerMs = answerMs;
    expect(await backend()).toBe(before);
  } finally {
    databaseTimeouts.answerMs = answerMs;
    await replication("resume");
    await db.destroy();
  }
});
