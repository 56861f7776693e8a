import { sql, type Generated } from "kysely";
import { afterAll, beforeAll, describe, it } from "vitest";
import { conformanceCases, type ConformanceSubject } from "./conformance.ts";
import { leaseLock } from "./lease-lock.ts";
import { testDb } from "./test-support/database.ts";

/** A table of this file's own, with a numeric key (the other files' have text and serial keys). */
interface ConformanceDatabase {
  lease_conformance: {
    id: Generated<number>;
    note: string | null;
    taken_at: Date | null;
    taken_until: Date | null;
    holder: string | null;
    fence: Generated<string>;
  };
}

const { db } = testDb<ConformanceDatabase>(12);
const subject: ConformanceSubject<ConformanceDatabase, "lease_conformance"> = {
  lock: leaseLock<ConformanceDatabase, "lease_conformance">({
    table: "lease_conformance",
    id: "id",
    lockedAt: "taken_at",
    lockedUntil: "taken_until",
    token: "holder",
    fence: "fence",
  }),
  db,
  write: { note: "written under the lease" },
  async newRow() {
    const row = await db
      .insertInto("lease_conformance")
      .values({ note: null })
      .returning("id")
      .executeTakeFirstOrThrow();
    return row.id;
  },
  async elapse(rowId, ms) {
    const by = sql`make_interval(secs => ${ms / 1000})`;
    await sql`UPDATE lease_conformance SET taken_at = taken_at - ${by}, taken_until = taken_until - ${by}
               WHERE id = ${rowId}`.execute(db);
  },
};

beforeAll(async () => {
  await sql`DROP TABLE IF EXISTS lease_conformance`.execute(db);
  await sql`
    CREATE TABLE lease_conformance (
      id serial PRIMARY KEY, note text, taken_at timestamptz, taken_until timestamptz, holder text,
      fence bigint NOT NULL DEFAULT 0
    )`.execute(db);
});
afterAll(async () => {
  await sql`DROP TABLE IF EXISTS lease_conformance`.execute(db);
  await db.destroy();
});

describe("the lease on PostgreSQL keeps the ShedLock-derived contract", () => {
  for (const each of conformanceCases) it(each.name, () => each.run(subject));
});
