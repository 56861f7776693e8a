import { sql, type Generated } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { leaseLock, type Acquisition, type LeaseHandle } from "./lease-lock.ts";
import { param, statement } from "./statements.ts";
import { testDb } from "./test-support/database.ts";

const CONTENDERS = 50;
/** Users with the columns of an identity-action lease, and their identities: tables of this file's own. */
interface LeaseTestDatabase {
  lease_test_users: {
    id: string;
    display_name: string;
    version: Generated<number>;
    identity_action_locked_at: Date | null;
    identity_action_locked_until: Date | null;
    identity_action_lock_token: string | null;
    identity_action_fence: Generated<string>;
    identity_action_generation: Generated<string>;
  };
  lease_test_identities: { id: string; user_id: string; position: number };
}

const identityActionLease = leaseLock<LeaseTestDatabase, "lease_test_users">({
  table: "lease_test_users",
  id: "id",
  lockedAt: "identity_action_locked_at",
  lockedUntil: "identity_action_locked_until",
  token: "identity_action_lock_token",
  fence: "identity_action_fence",
  generation: "identity_action_generation",
});
const { db, pool } = testDb<LeaseTestDatabase>(CONTENDERS + 5);

beforeAll(async () => {
  await sql`DROP TABLE IF EXISTS lease_test_users, lease_test_identities`.execute(db);
  await sql`
    CREATE TABLE lease_test_users (
      id text PRIMARY KEY, display_name text NOT NULL, version integer NOT NULL DEFAULT 1,
      identity_action_locked_at timestamptz, identity_action_locked_until timestamptz,
      identity_action_lock_token text, identity_action_fence bigint NOT NULL DEFAULT 0,
      identity_action_generation bigint NOT NULL DEFAULT 0
    )`.execute(db);
  await sql`CREATE TABLE lease_test_identities (id text PRIMARY KEY, user_id text NOT NULL, position integer NOT NULL)`.execute(
    db,
  );
  await sql`INSERT INTO lease_test_users (id, display_name) VALUES ('ada', 'Ada Lovelace')`.execute(db);
  await sql`INSERT INTO lease_test_identities VALUES ('github|8812', 'ada', 0), ('google|ada', 'ada', 1)`.execute(db);
});
afterAll(async () => {
  await sql`DROP TABLE IF EXISTS lease_test_users, lease_test_identities`.execute(db);
  await db.destroy();
});

async function clearLease(userId: string): Promise<void> {
  await sql`
    UPDATE lease_test_users
       SET identity_action_locked_at = NULL, identity_action_locked_until = NULL, identity_action_lock_token = NULL
     WHERE id = ${userId}`.execute(db);
}

/** Moves the lease's expiry into the past, as if its holder had stalled or died that long ago. */
async function expireLease(userId: string): Promise<void> {
  await sql`UPDATE lease_test_users SET identity_action_locked_until = now() - interval '1 millisecond' WHERE id = ${userId}`.execute(
    db,
  );
}

function held(result: Acquisition): LeaseHandle {
  if (!result.acquired) throw new Error(`expected to acquire, got ${result.reason}`);
  return result.lease;
}

describe("lease lock on real PostgreSQL", () => {
  beforeEach(() => clearLease("ada"));

  it(
    "lets exactly one of 50 truly concurrent acquirers on separate connections win; " +
      "every loser learns the winner's expiry in the same statement",
    async () => {
      const results = await Promise.all(
        Array.from({ length: CONTENDERS }, () => identityActionLease.acquire(db, "ada", { ttlMs: 10_000 })),
      );
      // The pool opened a connection per contender: the 50 UPDATEs really raced inside PostgreSQL.
      expect(pool.totalCount).toBeGreaterThanOrEqual(CONTENDERS);
      const winners = results.filter((result) => result.acquired);
      expect(winners).toHaveLength(1);
      const winner = held(winners[0]!);
      for (const loser of results.filter((result) => !result.acquired)) {
        expect(loser).toMatchObject({ acquired: false, reason: "held", heldUntil: winner.expiresAt });
      }
    },
  );

  it("stores the expiry the holder chose, on the database clock", async () => {
    const lease = held(await identityActionLease.acquire(db, "ada", { ttlMs: 10_000 }));
    const { rows } = await sql<{
      expected: Date;
    }>`SELECT identity_action_locked_at + interval '10 seconds' AS expected FROM lease_test_users WHERE id = 'ada'`.execute(
      db,
    );
    expect(lease.expiresAt).toEqual(rows[0]!.expected);
    expect(lease.remainingMs).toBeGreaterThan(9_000);
    expect(lease.remainingMs).toBeLessThanOrEqual(10_000);
    // Another reader, whatever TTL it would use, sees the same expiry: it is stored, not computed.
    expect(await identityActionLease.inspect(db, "ada")).toMatchObject({
      held: true,
      expiresAt: lease.expiresAt,
      token: lease.token,
      fence: lease.fence,
    });
  });

  it("takes over an expired lease; the old owner's late release then reports not held and clears nothing", async () => {
    const first = held(await identityActionLease.acquire(db, "ada", { ttlMs: 1_000 }));
    expect((await identityActionLease.acquire(db, "ada", { ttlMs: 1_000 })).acquired).toBe(false);

    await expireLease("ada");
    const second = held(await identityActionLease.acquire(db, "ada", { ttlMs: 1_000 }));
    expect(second.fence).toBe(first.fence + 1n);

    expect(await first.holds()).toBe(false);
    expect(await first.release()).toBe(false);
    expect(await identityActionLease.inspect(db, "ada")).toMatchObject({ held: true, token: second.token });
    expect(await second.release()).toBe(true);
    expect(await identityActionLease.inspect(db, "ada")).toMatchObject({
      held: false,
      lockedAt: null,
      expiresAt: null,
      token: null,
      remainingMs: 0,
    });
  });

  it(
    "hands the winner the row as the acquisition left it, typed as a query of it reads it, " +
      "so the work needs no read of its own",
    async () => {
      await sql`UPDATE lease_test_users SET display_name = 'Ada L.' WHERE id = 'ada'`.execute(db);
      const acquisition = await identityActionLease.acquire(db, "ada", { ttlMs: 10_000 });
      const lease = held(acquisition);
      if (!acquisition.acquired) throw new Error("expected to acquire");
      const { row } = acquisition;
      expect(row).toMatchObject({
        id: "ada",
        display_name: "Ada L.",
        identity_action_lock_token: lease.token,
        identity_action_fence: String(lease.fence),
        identity_action_locked_until: lease.expiresAt,
      });
      expect(row.identity_action_locked_at).toBeInstanceOf(Date);
      expect(Object.keys(row).filter((column) => column.startsWith("lease_lock_"))).toEqual([]);
      await lease.release();
      await sql`UPDATE lease_test_users SET display_name = 'Ada Lovelace' WHERE id = 'ada'`.execute(db);
    },
  );

  it("takes the primary's generation in the acquiring statement, stores it on the row, and inspect reads it back", async () => {
    const { rows } = await sql<{ timeline: string }>`
      SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint::text AS timeline`.execute(
      db,
    );
    const lease = held(await identityActionLease.acquire(db, "ada", { ttlMs: 10_000 }));
    // The timeline the server writes its WAL on now: 1 on a server that was never promoted.
    expect(lease.generation).toBe(BigInt(rows[0]!.timeline));
    expect(lease.generation).toBeGreaterThanOrEqual(1n);
    expect((await identityActionLease.inspect(db, "ada"))?.generation).toBe(lease.generation);
    await lease.release();
  });

  it("grows the fence by one at every acquisition", async () => {
    const fences: bigint[] = [];
    for (let round = 0; round < 3; round++) {
      const lease = held(await identityActionLease.acquire(db, "ada", { ttlMs: 10_000 }));
      fences.push(lease.fence);
      await lease.release();
    }
    expect(fences[1]).toBe(fences[0]! + 1n);
    expect(fences[2]).toBe(fences[1]! + 1n);
  });

  it("renews only its own unexpired lease, extends the expiry only, and never past the hold cap", async () => {
    const lease = held(await identityActionLease.acquire(db, "ada", { ttlMs: 1_000, maxHoldMs: 1_500 }));
    const { lockedAt } = (await identityActionLease.inspect(db, "ada"))!;
    const firstExpiry = lease.expiresAt;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await lease.renew()).toBe(true);
    expect(lease.expiresAt.getTime()).toBeGreaterThan(firstExpiry.getTime());
    expect(lease.expiresAt.getTime()).toBeLessThanOrEqual(lockedAt!.getTime() + 1_500);
    // `locked_at` still says when the lease was taken.
    expect((await identityActionLease.inspect(db, "ada"))!.lockedAt).toEqual(lockedAt);

    await expireLease("ada");
    expect(await lease.renew()).toBe(false);
  });

  it("keeps a lease for an outcome still unknown, past the hold cap, until someone else has taken it", async () => {
    const lease = held(await identityActionLease.acquire(db, "ada", { ttlMs: 1_000, maxHoldMs: 1_000 }));
    expect(await lease.holdFor(5_000)).toBe(true);
    expect(lease.remainingMs).toBeGreaterThan(4_000);
    // Expired but untaken (a slow process between its last call and the hold): nobody else acted under it.
    await expireLease("ada");
    expect(await lease.holdFor(5_000)).toBe(true);
    expect((await identityActionLease.inspect(db, "ada"))!.held).toBe(true);
    await expireLease("ada");
    held(await identityActionLease.acquire(db, "ada", { ttlMs: 1_000 }));
    expect(await lease.holdFor(5_000)).toBe(false);
  });

  it("reports a missing row as not found", async () => {
    expect(await identityActionLease.acquire(db, "nobody", { ttlMs: 1_000 })).toEqual({
      acquired: false,
      reason: "not-found",
    });
  });
});

describe("what an acquisition sends with it", () => {
  beforeEach(() => clearLease("ada"));

  it("checks what it requires in its own statement: unmet (free or held) takes nothing, met takes the lease", async () => {
    const never = sql<boolean>`false`;
    expect(await identityActionLease.acquire(db, "ada", { ttlMs: 1_000, requires: never })).toEqual({
      acquired: false,
      reason: "unmet",
    });
    expect((await identityActionLease.inspect(db, "ada"))!.held).toBe(false);
    const ada = sql<boolean>`EXISTS (SELECT 1 FROM lease_test_identities WHERE user_id = 'ada')`;
    const lease = held(await identityActionLease.acquire(db, "ada", { ttlMs: 1_000, requires: ada }));
    // What is required comes before who holds the lease: a caller without the right learns nothing of it.
    expect(await identityActionLease.acquire(db, "ada", { ttlMs: 1_000, requires: never })).toEqual({
      acquired: false,
      reason: "unmet",
    });
    expect(await identityActionLease.acquire(db, "ada", { ttlMs: 1_000, requires: ada })).toMatchObject({
      reason: "held",
    });
    await lease.release();
  });

  it("returns what its reads found, as JSON rows, to the winner only", async () => {
    const identities = () =>
      sql`SELECT id, position FROM lease_test_identities WHERE user_id = 'ada' AND EXISTS (SELECT 1 FROM acquired) ORDER BY position`;
    const taken = await identityActionLease.acquire(db, "ada", { ttlMs: 1_000, also: { identities } });
    if (!taken.acquired) throw new Error("expected to acquire");
    expect(taken.also.identities!.map((row) => row.id)).toContain("github|8812");
    expect(await identityActionLease.acquire(db, "ada", { ttlMs: 1_000, also: { identities } })).toMatchObject({
      acquired: false,
      reason: "held",
    });
    await taken.lease.release();
  });

  it("builds each shape of its statement once: the same recorders are called once, each call sends its own values", async () => {
    let built = 0;
    const echo = () => {
      built += 1;
      return sql`SELECT ${param("name")}::text AS name`;
    };
    const reads = { echo };
    for (const name of ["Ada", "Countess Lovelace"]) {
      const taken = await identityActionLease.acquire(db, "ada", { ttlMs: 1_000, also: reads, values: { name } });
      if (!taken.acquired) throw new Error("expected to acquire");
      expect(taken.also.echo).toEqual([{ name }]);
      await taken.lease.release();
    }
    expect(built).toBe(1);
    // A recorder made anew, its value written in, is another shape: built (and compiled) for its own call.
    const inline = await identityActionLease.acquire(db, "ada", {
      ttlMs: 1_000,
      also: { echo: () => sql`SELECT ${"Ada Lovelace"}::text AS name` },
    });
    expect(inline).toMatchObject({ acquired: true, also: { echo: [{ name: "Ada Lovelace" }] } });
    await held(inline).release();
    await expect(identityActionLease.acquire(db, "ada", { ttlMs: 1_000, also: reads })).rejects.toThrow(
      'no value for the statement\'s parameter "name"',
    );
    expect(built).toBe(1);
  });

  it("gives statements written once the owner's condition and write, its row and token as parameters", async () => {
    const owner = { rowId: param<string>("userId"), token: param<string>("token") };
    const rename = statement<LeaseTestDatabase, unknown, { userId: string; token: string; name: string }>((kysely) =>
      identityActionLease.updating(kysely, owner, { display_name: param("name") }),
    );
    const stillHeld = statement<LeaseTestDatabase, { held: boolean }, { userId: string; token: string }>(
      () => sql<{ held: boolean }>`SELECT ${identityActionLease.heldCondition(owner)} AS held`,
    );
    const lease = held(await identityActionLease.acquire(db, "ada", { ttlMs: 1_000 }));
    const mine = { userId: "ada", token: lease.token };
    expect((await stillHeld.execute(db, mine)).rows[0]!.held).toBe(true);
    expect((await rename.execute(db, { ...mine, name: "A. Lovelace" })).numAffectedRows).toBe(1n);
    expect((await rename.execute(db, { userId: "ada", token: randomUUID(), name: "Mallory" })).numAffectedRows).toBe(
      0n,
    );
    await lease.release();
    expect((await stillHeld.execute(db, mine)).rows[0]!.held).toBe(false);
    expect((await rename.execute(db, { ...mine, name: "Mallory" })).numAffectedRows).toBe(0n);
    const row = await db
      .selectFrom("lease_test_users")
      .select("display_name")
      .where("id", "=", "ada")
      .executeTakeFirst();
    expect(row?.display_name).toBe("A. Lovelace");
    await sql`UPDATE lease_test_users SET display_name = 'Ada Lovelace' WHERE id = 'ada'`.execute(db);
  });

  it("ends the lease with the holder's last write, in one statement, only while it is its own", async () => {
    const lease = held(await identityActionLease.acquire(db, "ada", { ttlMs: 1_000 }));
    const before = await db
      .selectFrom("lease_test_users")
      .select("version")
      .where("id", "=", "ada")
      .executeTakeFirstOrThrow();
    const written = await lease.releasing({ version: sql<number>`version + 1` }).executeTakeFirst();
    expect(written.numUpdatedRows).toBe(1n);
    expect(await identityActionLease.inspect(db, "ada")).toMatchObject({ held: false, token: null });
    const after = await db
      .selectFrom("lease_test_users")
      .select("version")
      .where("id", "=", "ada")
      .executeTakeFirstOrThrow();
    expect(after.version).toBe(before.version + 1);
    // Taken over since: the same write changes nothing, and the next holder keeps its lease.
    const next = held(await identityActionLease.acquire(db, "ada", { ttlMs: 1_000 }));
    expect((await lease.releasing({ version: sql<number>`version + 1` }).executeTakeFirst()).numUpdatedRows).toBe(0n);
    expect((await identityActionLease.inspect(db, "ada"))!.token).toBe(next.token);
    await next.release();
  });
});

describe("a loser that waited for the winner's row lock", () => {
  beforeEach(() => clearLease("ada"));

  it("learns the winner's expiry from the committed row, not from its own older snapshot", async () => {
    let loser: Promise<Acquisition> | undefined;
    const winner = await db.transaction().execute(async (trx) => {
      const taken = held(await identityActionLease.acquire(trx, "ada", { ttlMs: 10_000 }));
      // The loser's UPDATE blocks on the row the uncommitted winner holds, with a snapshot from before it.
      loser = identityActionLease.acquire(db, "ada", { ttlMs: 10_000 });
      await expect
        .poll(async () => {
          const { rows } = await sql<{ waiting: number }>`
            SELECT count(*)::int AS waiting FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND datname = current_database()`.execute(db);
          return rows[0]!.waiting;
        })
        .toBe(1);
      return taken;
    });
    expect(await loser).toMatchObject({ acquired: false, reason: "held", heldUntil: winner.expiresAt });
  });
});
