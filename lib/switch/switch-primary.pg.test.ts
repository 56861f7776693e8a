import { Kysely, PostgresDialect, sql } from "kysely";
import { afterAll, beforeEach, describe, expect, inject, it } from "vitest";
import { createDb } from "../../db/connection";
import { preparingPool } from "../../db/prepared-statements";
import type { Database } from "../../db/schema";
import { NotYourUser, OperationInProgress } from "../core/problems";
import type { IdentityProviderClient } from "../provider/client";
import { leaseGuard } from "./lease-guard";
import { promoteToPrimary } from "./switch-primary";

const { db, pool } = createDb(inject("databaseUrl"), 4, { namedStatements: inject("namedStatements") });
afterAll(() => db.destroy());

/** A query builder over the same pool that notes every statement it sends to the database, in order. */
function countingStatements() {
  const sent: string[] = [];
  const counted = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: inject("namedStatements") ? preparingPool(pool) : pool }),
    log: (event) => void (event.level === "query" && sent.push(event.query.sql)),
  });
  return { db: counted, sent };
}

/** The provider as a switch needs it to answer: both calls succeed at once (the provider is not under test). */
const provider = {
  unlinkIdentity: async () => [],
  linkAccount: async () => [],
  getAccount: async () => ({ accountId: "", identityIds: [] }),
  renameAccount: async () => undefined,
} as unknown as IdentityProviderClient;

const guard = leaseGuard({ ttlMs: 10_000, applyLimitMs: 10_000, providerFences: false });

beforeEach(async () => {
  await sql`UPDATE users SET primary_identity_id = 'github|1906', identity_action_locked_at = NULL,
                 identity_action_locked_until = NULL, identity_action_lock_token = NULL WHERE id = 'grace'`.execute(db);
  await sql`DELETE FROM switch_journal WHERE user_id = 'grace'`.execute(db);
});

describe("the product's switch on PostgreSQL", () => {
  it("sends 3 statements: acquire (with the requirement, intent and leftovers), unlinked, save + done + release", async () => {
    const counted = countingStatements();
    const result = await promoteToPrimary(counted.db, provider, guard, {
      userId: "grace",
      identityId: "auth0|grace-email",
    });
    expect(result).toMatchObject({ primaryIdentityId: "auth0|grace-email", changed: true });
    expect(counted.sent).toHaveLength(3);
    // Each marked to be sent named (parsed and planned once per connection) by a pool that allows it.
    expect(counted.sent.map((text) => /^\/\* prepared: [a-z0-9_]+ \*\//.test(text))).toEqual([true, true, true]);
    const { rows } = await sql<{ step: string; locked: boolean; primary: string }>`
      SELECT j.step, u.identity_action_lock_token IS NOT NULL AS locked, u.primary_identity_id AS primary
        FROM switch_journal j JOIN users u ON u.id = j.user_id WHERE j.operation_id = ${result.operationId}::uuid`.execute(
      db,
    );
    expect(rows).toEqual([{ step: "done", locked: false, primary: "auth0|grace-email" }]);
  });

  it("answers an identity already primary in 2 statements, and journals nothing open", async () => {
    const counted = countingStatements();
    const result = await promoteToPrimary(counted.db, provider, guard, { userId: "grace", identityId: "github|1906" });
    expect(result).toMatchObject({ changed: false });
    expect(counted.sent).toHaveLength(2);
    const open =
      await sql`SELECT 1 FROM switch_journal WHERE user_id = 'grace' AND step NOT IN ('done', 'resolved')`.execute(db);
    expect(open.rows).toHaveLength(0);
  });

  it("refuses in the acquiring statement what the caller's requirement does not allow, then says why", async () => {
    const counted = countingStatements();
    const requires = {
      condition: sql<boolean>`false`,
      values: {},
      unmet: async () => new NotYourUser(),
    };
    await expect(
      promoteToPrimary(counted.db, provider, guard, { userId: "grace", identityId: "auth0|grace-email", requires }),
    ).rejects.toBeInstanceOf(NotYourUser);
    expect(counted.sent).toHaveLength(1);
    expect(await sql`SELECT 1 FROM switch_journal WHERE user_id = 'grace'`.execute(db)).toMatchObject({ rows: [] });
  });

  it("refuses while an earlier switch's call may still land past its deadline, naming that switch", async () => {
    const earlier = "6f1c2a9e-8d4b-4c3a-9e2f-1a2b3c4d5e6f";
    // Left by a holder that died between its calls, its unlink's outcome unknown for a minute more.
    await sql`INSERT INTO switch_journal (user_id, operation_id, fence, from_identity_id, to_identity_id, step, in_flight_until)
              VALUES ('grace', ${earlier}::uuid, 0, 'github|1906', 'auth0|grace-email', 'unlinked',
                      now() + interval '60 seconds')`.execute(db);
    const refusal = await promoteToPrimary(db, provider, guard, {
      userId: "grace",
      identityId: "auth0|grace-email",
    }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(OperationInProgress);
    expect((refusal as OperationInProgress).toJSON()).toMatchObject({ status: 409, awaitedOperationId: earlier });
  });
});
