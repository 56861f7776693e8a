import type { Kysely } from "kysely";
import { describe, expect, inject, it } from "vitest";
import { createDb } from "../../db/connection";
import type { Database } from "../../db/schema";
import type { LeaseHandle } from "@lease-lock-lab/lease";
import { identityActionLease } from "../../lib/switch/users";
import { failover } from "./cluster";

/** One acquisition and release of ada's lease on a pool of its own: the token it got. */
async function takeAndRelease(): Promise<Pick<LeaseHandle, "fence" | "generation">> {
  const { db } = createDb(inject("databaseUrl"), 1);
  try {
    return await takeAndReleaseOn(db);
  } finally {
    await db.destroy();
  }
}

async function takeAndReleaseOn(db: Kysely<Database>): Promise<Pick<LeaseHandle, "fence" | "generation">> {
  const taken = await identityActionLease.acquire(db, "ada", { ttlMs: 5_000 });
  if (!taken.acquired) throw new Error(`ada's lease is ${taken.reason}`);
  await taken.lease.release();
  const stored = await identityActionLease.inspect(db, "ada");
  expect(stored?.generation).toBe(taken.lease.generation);
  return { fence: taken.lease.fence, generation: taken.lease.generation };
}

describe("the lease's generation across real promotions", () => {
  it("is strictly greater after every promotion; the fence goes on counting where nothing was lost", async () => {
    const tokens = [await takeAndRelease()];
    for (let promotion = 0; promotion < 3; promotion++) {
      await failover();
      tokens.push(await takeAndRelease());
    }
    for (let each = 1; each < tokens.length; each++) {
      expect(tokens[each]!.generation).toBeGreaterThan(tokens[each - 1]!.generation);
      // Synchronous replication: the promoted standby had every acquisition.
      expect(tokens[each]!.fence).toBe(tokens[each - 1]!.fence + 1n);
    }
  });

  it("asynchronous: a promotion that lost acquisitions hands their fences out again, never their (generation, fence)", async () => {
    const before = await takeAndRelease();
    const lost: Pick<LeaseHandle, "fence" | "generation">[] = [];
    await failover({
      losing: true,
      meanwhile: async () => {
        for (let each = 0; each < 2; each++) lost.push(await takeAndRelease());
      },
    });
    const after = [await takeAndRelease(), await takeAndRelease()];
    // The promoted standby never received the two acquisitions: its counter starts again after `before`…
    expect(lost.map((token) => token.fence)).toEqual([before.fence + 1n, before.fence + 2n]);
    expect(after.map((token) => token.fence)).toEqual(lost.map((token) => token.fence));
    // …but in a greater generation: every pair after the promotion outranks every pair before it.
    for (const token of after) for (const old of lost) expect(token.generation).toBeGreaterThan(old.generation);
  });
});
