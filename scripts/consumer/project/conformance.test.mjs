// The ShedLock-derived cases against the installed package: its lease on PostgreSQL, and its in-memory double.
import { after, before, describe, it } from "node:test";
import { Kysely, PostgresDialect, sql } from "kysely";
import { leaseLock } from "@lease-lock-lab/lease";
import { conformanceCases } from "@lease-lock-lab/lease/conformance";
import { inMemoryLeaseLock } from "@lease-lock-lab/lease/in-memory";
import pg from "pg";

const db = new Kysely({
  dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 12 }) }),
});

before(async () => {
  await sql`DROP TABLE IF EXISTS jobs`.execute(db);
  await sql`CREATE TABLE jobs (id serial PRIMARY KEY, status text NOT NULL DEFAULT 'new', leased_at timestamptz,
              leased_until timestamptz, lease_owner text, lease_fence bigint NOT NULL DEFAULT 0)`.execute(db);
});
after(() => db.destroy());

const onPostgres = {
  lock: leaseLock({
    table: "jobs",
    id: "id",
    lockedAt: "leased_at",
    lockedUntil: "leased_until",
    token: "lease_owner",
    fence: "lease_fence",
  }),
  db,
  write: { status: "done" },
  newRow: async () => (await db.insertInto("jobs").defaultValues().returning("id").executeTakeFirstOrThrow()).id,
  async elapse(id, ms) {
    const by = sql`make_interval(secs => ${ms / 1000})`;
    await sql`UPDATE jobs SET leased_at = leased_at - ${by}, leased_until = leased_until - ${by} WHERE id = ${id}`.execute(
      db,
    );
  },
};

function inMemory() {
  const lock = inMemoryLeaseLock();
  let lastId = 0;
  return {
    lock,
    db: undefined,
    write: { status: "done" },
    newRow: async () => (lock.addRow(++lastId, { status: "new" }), lastId),
    elapse: async (_id, ms) => lock.clock.advance(ms),
  };
}

describe("the installed lease on PostgreSQL", () => {
  for (const each of conformanceCases) it(each.name, () => each.run(onPostgres));
});
describe("the installed in-memory double", () => {
  for (const each of conformanceCases) it(each.name, () => each.run(inMemory()));
});
