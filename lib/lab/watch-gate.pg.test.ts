import pg from "pg";
import { sql } from "kysely";
import { afterAll, beforeEach, expect, inject, it } from "vitest";
import { createDb } from "../../db/connection";
import { resetGrace } from "../../test/harness/seed-grace";
import { holdGateOpen } from "./watch-gate";

const { db } = createDb(inject("databaseUrl"), 2);
const clients: pg.Client[] = [];
afterAll(async () => {
  for (const client of clients) await client.end();
  await db.destroy();
});
beforeEach(async () => {
  await resetGrace(db);
  await closeGate();
});

/** As after 30 s without a stream client anywhere. */
const closeGate = () => sql`UPDATE lab_watch SET until = '-infinity'`.execute(db);

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: inject("databaseUrl") });
  await client.connect();
  clients.push(client);
  return client;
}

const takeGracesLease = `UPDATE users SET identity_action_locked_at = now(), identity_action_locked_until = now() + interval '10 s',
                                          identity_action_lock_token = gen_random_uuid() WHERE id = 'grace'`;

/** A listener on the lab's channel; `heardSoFar` ends with a marker of its own, after every earlier notification. */
async function listenToLab() {
  const listener = await connect();
  let heard: string[] = [];
  listener.on("notification", ({ payload }) => heard.push((JSON.parse(payload ?? "{}") as { kind: string }).kind));
  await listener.query("LISTEN lab_stream");
  return {
    async heardSoFar(): Promise<string[]> {
      // Notifications arrive in commit order: once the marker is heard, everything committed before it was.
      await listener.query(`SELECT pg_notify('lab_stream', '{"kind":"marker"}')`);
      await expect.poll(() => heard.includes("marker")).toBe(true);
      const kinds = heard.filter((kind) => kind !== "marker");
      heard = [];
      return kinds;
    },
  };
}

it("with the gate closed, a lease change notifies nothing; held open, it does", async () => {
  const lab = await listenToLab();
  await sql.raw(takeGracesLease).execute(db);
  expect(await lab.heardSoFar()).toEqual([]);
  await holdGateOpen(db);
  await resetGrace(db);
  expect(await lab.heardSoFar()).toEqual(["lease"]);
});

it("with the gate closed, a provider call's log row notifies nothing; held open, it does", async () => {
  const lab = await listenToLab();
  const logACall = () =>
    sql`INSERT INTO idp.calls (method, path, status, duration_ms) VALUES ('GET', '/api/v2/users/x', 200, 1)`.execute(
      db,
    );
  await logACall();
  expect(await lab.heardSoFar()).toEqual([]);
  await holdGateOpen(db);
  await logACall();
  expect(await lab.heardSoFar()).toEqual(["provider-call"]);
});

it("says whether the gate may have been closed since this process last held it", async () => {
  expect(await holdGateOpen(db)).toBe(true);
  expect(await holdGateOpen(db)).toBe(false);
  await closeGate();
  expect(await holdGateOpen(db)).toBe(true);
  // Another instance opened it after a moment closed: open now, but not all along.
  await sql`UPDATE lab_watch SET opened_at = clock_timestamp(), until = clock_timestamp() + interval '30 s'`.execute(
    db,
  );
  expect(await holdGateOpen(db)).toBe(true);
});

it("an opening waits for a write that read the gate closed, so what is read after it sees that write", async () => {
  const writer = await connect();
  await writer.query("BEGIN");
  await writer.query(takeGracesLease); // its trigger read the gate closed: no notification will tell of it
  let opened = false;
  const opening = holdGateOpen(db).then(() => (opened = true));
  const waitingForTheGate = async () => {
    const { rows } = await sql<{ waiting: boolean }>`
      SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = 1769 AND objid = 16
                                              AND NOT granted) AS waiting`.execute(db);
    return rows[0]!.waiting;
  };
  await expect.poll(waitingForTheGate).toBe(true);
  expect(opened).toBe(false);
  await writer.query("COMMIT");
  await opening;
  const { rows } = await sql<{ held: boolean }>`
    SELECT identity_action_locked_at IS NOT NULL AS held FROM users WHERE id = 'grace'`.execute(db);
  expect(rows[0]!.held).toBe(true);
});

it("an open gate is kept open without its lock: a writer holding its transaction is not waited for", async () => {
  await holdGateOpen(db);
  const writer = await connect();
  await writer.query("BEGIN");
  await writer.query(takeGracesLease); // holds the gate's lock shared until it ends
  try {
    expect(await holdGateOpen(db)).toBe(false);
  } finally {
    await writer.query("COMMIT");
  }
});

it("an opening waits at most 2 s for a writer that holds its transaction, then fails", async () => {
  const writer = await connect();
  await writer.query("BEGIN");
  await writer.query(takeGracesLease);
  try {
    await expect(holdGateOpen(db)).rejects.toThrow("lock timeout");
  } finally {
    await writer.query("COMMIT");
  }
  expect(await holdGateOpen(db)).toBe(true);
});
