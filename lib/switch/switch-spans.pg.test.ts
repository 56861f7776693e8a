import { sql } from "kysely";
import { afterAll, beforeEach, describe, expect, inject, it } from "vitest";
import { withLease } from "@lease-lock-lab/lease";
import { observedLease } from "@lease-lock-lab/lease/telemetry";
import { createDb } from "../../db/connection";
import { inMemoryTelemetry } from "../lease/test-support/telemetry.ts";
import type { IdentityProviderClient } from "../provider/client";
import { leaseGuard, productLeaseParts } from "./lease-guard";
import { promoteToPrimary } from "./switch-primary";

const { db } = createDb(inject("databaseUrl"), 4, { namedStatements: inject("namedStatements") });
afterAll(() => db.destroy());

/** Both provider calls succeed at once: the provider is not under test. */
const provider = {
  unlinkIdentity: async () => [],
  linkAccount: async () => [],
  getAccount: async () => ({ accountId: "", identityIds: [] }),
  renameAccount: async () => undefined,
} as unknown as IdentityProviderClient;

beforeEach(async () => {
  await sql`UPDATE users SET primary_identity_id = 'github|1906', identity_action_locked_at = NULL,
                 identity_action_locked_until = NULL, identity_action_lock_token = NULL WHERE id = 'grace'`.execute(db);
});

describe("one switch's lease in OpenTelemetry (an in-memory exporter)", () => {
  it("gives its acquire, each checkpoint before a write, and its release with the save, with table, id and fence", async () => {
    const telemetry = inMemoryTelemetry();
    const runUnderLease = observedLease(withLease, telemetry);
    const guard = leaseGuard(
      { ttlMs: 10_000, applyLimitMs: 10_000, providerFences: false },
      { ...productLeaseParts, runUnderLease },
    );
    await promoteToPrimary(db, provider, guard, { userId: "grace", identityId: "auth0|grace-email" });
    const spans = telemetry.spans();
    expect(
      spans.map(({ name, attributes }) => [name, attributes["lease.step"] ?? null, attributes["lease.outcome"]]),
    ).toEqual([
      ["lease.acquire", null, "won"],
      ["lease.checkpoint", "unlink", "held"],
      ["lease.checkpoint", "link", "held"],
      ["lease.checkpoint", "save", "held"],
      ["lease.release", null, "released"],
    ]);
    const { fence } = await db
      .selectFrom("users")
      .select("identity_action_fence as fence")
      .where("id", "=", "grace")
      .executeTakeFirstOrThrow();
    for (const { attributes } of spans)
      expect(attributes).toMatchObject({
        "lease.table": "users",
        "lease.row_id": "grace",
        "lease.fence": String(fence),
      });
    expect(spans[0]!.attributes["lease.expires_at"]).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(spans[4]!.attributes["lease.release.with_write"]).toBe(true);
    const metrics = await telemetry.metrics();
    expect(metrics["lease.acquisitions"]!.points).toMatchObject([{ attributes: { "lease.outcome": "won" }, value: 1 }]);
    expect(metrics["lease.held.duration"]!.points).toMatchObject([{ value: { count: 1 } }]);
  });
});
