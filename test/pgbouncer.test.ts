import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDb, databaseTimeouts } from "../db/connection";
import { startPgBouncer, type RunningPgBouncer } from "../scripts/parts/pgbouncer";
import { identityActionLease } from "../lib/switch/users";
import { notTheGatesLock } from "../lib/lab/watch-gate";
import { startApp, type RunningApp } from "./harness/app-server";
import { openEventStream } from "./harness/event-stream";
import { appClient, type AppClient } from "./harness/http-client";

// The system's PgBouncer in transaction pooling in front of the test database, and an app instance whose
// pool goes through it (as `npm run dev -- --pgbouncer` runs it), beside the direct one of the global set-up.
const directUrl = inject("databaseUrl");
const direct = appClient(inject("appUrl"));
let pgbouncer: RunningPgBouncer;
let pooledApp: RunningApp;
let pooled: AppClient;

beforeAll(async () => {
  pgbouncer = await startPgBouncer(directUrl, Number(process.env.PGBOUNCER_PORT ?? 6433));
  const pooledEnv = pgbouncer.appEnv(directUrl);
  pooledApp = await startApp({
    databaseUrl: pooledEnv.DATABASE_URL,
    port: Number(process.env.POOLED_APP_PORT ?? 3230),
    env: { ...pooledEnv, LAB_INSTANCE: "pooled" },
  });
  pooled = appClient(pooledApp.baseUrl);
  await direct.reset();
});

afterAll(async () => {
  await pooledApp?.stop();
  await pgbouncer?.stop();
});

const timeoutsOf = async (url: string) => {
  const { db } = createDb(url, 1);
  try {
    const read = async (name: string) =>
      Object.values((await sql.raw(`SHOW ${name}`).execute(db)).rows[0] as object)[0];
    return {
      statement_timeout: await read("statement_timeout"),
      lock_timeout: await read("lock_timeout"),
      idle_in_transaction_session_timeout: await read("idle_in_transaction_session_timeout"),
    };
  } finally {
    await db.destroy();
  }
};

describe("through PgBouncer in transaction mode", () => {
  it("every session runs with the app's timeouts, pooled or direct: they are the database's, not startup parameters", async () => {
    const expected = {
      statement_timeout: `${databaseTimeouts.statementMs / 60_000}min`,
      lock_timeout: `${databaseTimeouts.lockMs / 1000}s`,
      idle_in_transaction_session_timeout: `${databaseTimeouts.idleInTransactionMs / 60_000}min`,
    };
    expect(await timeoutsOf(pgbouncer.pooledUrl(directUrl))).toEqual(expected);
    expect(await timeoutsOf(directUrl)).toEqual(expected);
  });

  it("refuses a client that sends a session setting at startup, as production poolers do", async () => {
    const client = new pg.Client({ connectionString: pgbouncer.pooledUrl(directUrl), statement_timeout: 1_000 });
    client.on("error", () => undefined);
    await expect(client.connect()).rejects.toThrow(/unsupported startup parameter: statement_timeout/);
  });

  it("the lease library, unchanged, with its statements unnamed: 30 rounds of 8 concurrent acquirers, one winner each", async () => {
    const { db } = createDb(pgbouncer.pooledUrl(directUrl), 8, { namedStatements: false });
    try {
      for (let round = 0; round < 30; round++) {
        const acquisitions = await Promise.all(
          Array.from({ length: 8 }, () => identityActionLease.acquire(db, "grace", { ttlMs: 5_000 })),
        );
        const won = acquisitions.filter((acquisition) => acquisition.acquired);
        expect(won).toHaveLength(1);
        expect(await won[0]!.lease.release()).toBe(true);
      }
    } finally {
      await db.destroy();
    }
  });

  it("the app through it: 20 concurrent reads and a burst of 20 switches, no 500, one switch wins", async () => {
    const ada = await pooled.signedIn("ada");
    const reads = await Promise.all(Array.from({ length: 20 }, () => ada.get("/api/users/ada")));
    expect(reads.map((read) => read.status)).toEqual(Array(20).fill(200));
    const burst = await ada.post("/api/lab/burst", { userId: "ada", count: 20, identityId: "github|8812" });
    expect(burst.status).toBe(200);
    expect(burst.body.counts).toEqual({ "200": 1, "409": 19 });
    expect(burst.body.consistent).toBe(true);
    expect(await ada.leaseHeld("ada")).toBe(false);
  });

  it("the instance behind the pooler hears the other instance's operations (its LISTEN goes straight to PostgreSQL)", async () => {
    await direct.reset();
    const stream = await openEventStream(`${pooledApp.baseUrl}/api/lab/stream`);
    try {
      const switched = await (await direct.signedIn("ada")).promote("ada", "github|8812");
      expect(switched.status).toBe(200);
      const heard = await stream.waitFor(
        (message) => message.event === "operation" && message.data.operationId === switched.body.operationId,
      );
      expect(heard.data.instance).not.toBe("pooled");
    } finally {
      stream.close();
    }
  });

  it("pooler-strands-session-lock: listed as unavailable without PgBouncer, refused there with a 409, and shown through it", async () => {
    const listed = async (client: AppClient) =>
      (await client.get("/api/lab/experiments")).body.experiments.find(
        (experiment: { id: string }) => experiment.id === "pooler-strands-session-lock",
      );
    expect(await listed(direct)).toMatchObject({ available: false, awaitingParts: false, needs: ["pgbouncer"] });
    const refused = await direct.post("/api/lab/experiments/pooler-strands-session-lock/run");
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ type: expect.stringMatching(/\/part-not-running$/), needs: ["pgbouncer"] });
    expect(await listed(pooled)).toMatchObject({ available: true, needs: ["pgbouncer"] });

    const run = await pooled.post("/api/lab/experiments/pooler-strands-session-lock/run");
    expect(run.status).toBe(200);
    expect(run.body.verdict, run.body.explanation).toBe("as-expected");
    expect(run.body.observed.locksGrantedAfterTheSwitch).toHaveLength(1);
    expect(run.body.observed.anotherSessionTookIt).toBe(false);
    // The run ended the stranded backend: no advisory lock is left behind in this file's database (files
    // running beside it hold theirs in databases of their own).
    const probe = new pg.Client({ connectionString: directUrl });
    await probe.connect();
    try {
      await expect
        .poll(
          async () =>
            (
              await probe.query(
                `SELECT count(*)::int AS n FROM pg_locks
                  WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    AND ${notTheGatesLock("pg_locks")}`,
              )
            ).rows[0].n,
        )
        .toBe(0);
    } finally {
      await probe.end();
    }
  });

  it(
    "q5-advisory-or-lease through it: counts the app's connections, not the pooler's, says " +
      "what the pooler changes, and holds (twice: a run leaves the next one a free lock)",
    async () => {
      for (const attempt of [1, 2]) {
        const run = await pooled.post("/api/lab/experiments/q5-advisory-or-lease/run");
        expect(run.status).toBe(200);
        expect(run.body.verdict, `run ${attempt}: ${run.body.explanation}`).toBe("as-expected");
        const { observed } = run.body;
        expect(observed.throughTransactionPooler).toBe(true);
        // The lease holds nothing during the calls: none of the app's connections, no lock a pooler kept.
        expect(observed.lease.connectionsHeldDuringCalls).toEqual({
          poolInUse: 0,
          pinnedConnections: 0,
          idleInTransaction: 0,
          advisoryLocks: 0,
        });
        expect(observed.advisory.connectionsHeldDuringCalls).toMatchObject({ idleInTransaction: 1, advisoryLocks: 1 });
        expect(observed.sessionAdvisory.connectionsHeldDuringCalls).toMatchObject({
          poolInUse: 0,
          pinnedConnections: 1,
        });
        for (const variant of [observed.advisory, observed.sessionAdvisory, observed.lease])
          expect(variant.droppedDuringTheCall).toBe(true);
        expect(run.body.explanation).toMatch(/goes through a transaction pooler/);
        // Its second session-advisory switch's lock stayed on a server connection: ended before the lease's variant.
        expect(observed.lease.leftoverLocksEnded).toBe(1);
        // And the run before it (the pooler card's, then this one's first) left none behind.
        expect(observed.advisory.leftoverLocksEnded).toBe(0);
      }
    },
  );
});
