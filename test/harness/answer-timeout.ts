/**
 * The app's answer timeout (`databaseTimeouts.answerMs`) shortened for one piece of work, on a pool of one connection
 * of its own: whether the backend that served the pool before the work still serves it after (the cancel answered,
 * the connection kept) or another does (the connection closed).
 */
import { sql, type Kysely } from "kysely";
import { createDb, databaseTimeouts } from "../../db/connection";
import type { Database } from "../../db/schema";

export async function withAnswerTimeout(
  databaseUrl: string,
  answerMs: number,
  work: (db: Kysely<Database>) => Promise<void>,
): Promise<{ sameBackend: boolean }> {
  const { db } = createDb(databaseUrl, 1);
  const configured = databaseTimeouts.answerMs;
  const backend = async () => (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db)).rows[0]!.pid;
  try {
    const before = await backend();
    databaseTimeouts.answerMs = answerMs;
    try {
      await work(db);
    } finally {
      databaseTimeouts.answerMs = configured;
    }
    return { sameBackend: (await backend()) === before };
  } finally {
    await db.destroy();
  }
}
