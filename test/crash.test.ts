import { sql } from "kysely";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createDb } from "../db/connection";
import { identityActionLease } from "../lib/switch/users";
import { startApp } from "./harness/app-server";
import { appClient } from "./harness/http-client";

// A second app instance on the same database, killed for real (SIGKILL) in the middle of a switch.
const databaseUrl = inject("databaseUrl");
const lab = appClient(inject("appUrl"));
const { db } = createDb(databaseUrl, 2);
const victimPort = Number(process.env.CRASH_APP_PORT ?? 3213);
const ttlMs = 2_000;

afterAll(() => db.destroy());

const latestJournalStep = async () =>
  (await db.selectFrom("switch_journal").select("step").orderBy("id", "desc").limit(1).executeTakeFirst())?.step ??
  null;
const journalEntriesOf = async (userId: string) =>
  Number(
    (
      await db
        .selectFrom("switch_journal")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("user_id", "=", userId)
        .executeTakeFirstOrThrow()
    ).n,
  );
const databaseNow = async () => (await sql<{ now: Date }>`SELECT clock_timestamp() AS now`.execute(db)).rows[0]!.now;

/** Where the last switch has got to: its journal's step, and whether the provider has answered its link. */
const progress = async () => {
  const step = await latestJournalStep();
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM idp.calls WHERE method = 'POST' AND status < 300`.execute(db);
  return rows[0]!.n > 0 ? `${step}, link answered` : step;
};

// The link is not journaled: the save's own statement records it with the new primary, so a crash between the
// two leaves the journal at `unlinked` with the link made at the provider.
const crashPoints = [
  { point: "after acquire (the unlink in flight)", at: "acquired", stall: null },
  { point: "after unlink (the link in flight)", at: "unlinked", stall: null },
  { point: "after link (before the save)", at: "unlinked, link answered", stall: { at: "linked", ms: 30_000 } },
  { point: "before release (the journal says done)", at: "done, link answered", stall: { at: "saved", ms: 30_000 } },
] as const;

describe("a switch killed with SIGKILL", () => {
  it.each(crashPoints)(
    "$point: the lease is free within the TTL, the next switch succeeds, the audit is consistent",
    async ({ at, stall }) => {
      await lab.reset();
      // A provider that fences lets the next holder read at once: the dead process's call in flight, if it
      // ever lands, is refused. (Without fencing it must wait until the call can no longer land.)
      await lab.configure({
        strategy: "lease",
        leaseTtlMs: ttlMs,
        reconcileAfterMs: null,
        provider: { latencyMs: 1_500, enforceFencing: true },
        faults: { stall },
      });

      const victim = await startApp({ databaseUrl, port: victimPort });
      const switching = (await appClient(victim.baseUrl).signedIn("ada")).promote("ada", "github|8812").then(
        () => "answered",
        () => "connection lost",
      );
      try {
        await expect.poll(progress, { timeout: 15_000 }).toBe(at);
      } finally {
        await victim.kill();
      }
      const crashedAt = await databaseNow();
      expect(await switching).toBe("connection lost");
      // Nobody renews a dead process's lease: it ends no later than the TTL after the crash.
      const orphaned = await identityActionLease.inspect(db, "ada");
      expect(orphaned?.held).toBe(true);
      expect(orphaned!.expiresAt!.getTime()).toBeLessThanOrEqual(crashedAt.getTime() + ttlMs);

      const restarted = await startApp({ databaseUrl, port: victimPort });
      try {
        await lab.configure({ provider: { latencyMs: 50 } });
        const ada = await appClient(restarted.baseUrl).signedIn("ada");
        await expect
          .poll(async () => (await ada.get("/api/users/ada")).body.lease.held, { timeout: ttlMs + 5_000 })
          .toBe(false);

        const next = await ada.promote("ada", "auth0|ada-email");
        // The whole answer, so that a refusal says which problem it was.
        expect({ status: next.status, body: next.body }).toMatchObject({ status: 200 });
        expect(next.body.primaryIdentityId).toBe("auth0|ada-email");
        const audit = await lab.audit();
        expect(audit.users.find((user: { userId: string }) => user.userId === "ada").violations).toEqual([]);
        expect(audit.consistent).toBe(true);
        if (at.startsWith("unlinked")) {
          const events = (await lab.get("/api/lab/events?userId=ada")).body.events as { message: string }[];
          expect(events.map((event) => event.message)).toContainEqual(
            expect.stringMatching(
              /^Recovered switch from google-oauth2\|104423 to github\|8812 left by operation \w+ \(its lease expired before it finished\)/,
            ),
          );
        }
      } finally {
        await restarted.stop();
      }
    },
  );
});

describe("a switch killed with SIGKILL, the provider not fencing", () => {
  it(
    "the next switch, retried when its 409s say, succeeds no later than the lease's last expiry plus " +
      "the apply limit; the reconciler gives way meanwhile",
    async () => {
      const applyLimitMs = 1_500;
      await lab.reset();
      await lab.configure({
        strategy: "lease",
        leaseTtlMs: ttlMs,
        // The background reconciler runs: it must neither churn journal entries nor take the lease first.
        reconcileAfterMs: 500,
        provider: { latencyMs: 1_500, enforceFencing: false, applyLimitMs },
      });
      const victim = await startApp({ databaseUrl, port: victimPort });
      const switching = (await appClient(victim.baseUrl).signedIn("ada"))
        .promote("ada", "github|8812")
        .catch(() => undefined);
      try {
        await expect.poll(latestJournalStep, { timeout: 15_000 }).toBe("acquired");
      } finally {
        await victim.kill();
      }
      await switching;
      const lastExpiry = (await identityActionLease.inspect(db, "ada"))!.expiresAt!;
      const bound = lastExpiry.getTime() + applyLimitMs;

      await lab.configure({ provider: { latencyMs: 50 } });
      const ada = await lab.signedIn("ada");
      for (let attempt = 1; ; attempt++) {
        const sentAt = (await databaseNow()).getTime();
        const answer = await ada.promote("ada", "auth0|ada-email");
        if (answer.status === 200) {
          expect(sentAt).toBeLessThanOrEqual(bound + 1_000);
          break;
        }
        // Every refusal names the moment to come back, and that moment is within the bound.
        expect(answer.status).toBe(409);
        expect(answer.body.type).toMatch(/\/operation-in-progress$/);
        const comeBack = Date.parse(answer.body.expiresAt);
        expect(comeBack).toBeLessThanOrEqual(bound);
        expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        expect(attempt).toBeLessThan(4);
        // Only the crashed switch's entry: no refused request, the reconciler's included, left one behind.
        expect(await journalEntriesOf("ada")).toBe(1);
        // The client waits as told: until the time the 409 named (the database runs on this machine's clock).
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, comeBack - Date.now())));
      }
      expect((await lab.audit()).consistent).toBe(true);
    },
  );
});

describe("a switch killed with SIGKILL while its unlink is at the provider", () => {
  it("the provider, a process of its own, applies the unlink after its caller died; the next switch recovers it", async () => {
    await lab.reset();
    await lab.configure({
      strategy: "lease",
      leaseTtlMs: ttlMs,
      reconcileAfterMs: null,
      // A plain call: the provider applies what it has received whether or not its caller is still there.
      // (Scripted as "ok" only so that the test sees when it has arrived: the script is taken on arrival.) 4 s: the
      // kill, two queries and a read of the provider come between its arrival and its landing, on a loaded machine.
      provider: {
        latencyMs: 4_000,
        endpoints: { get: { latencyMs: 20 } },
        enforceFencing: true,
        script: { unlink: ["ok"] },
      },
    });
    const providerAccountOf = async (identityId: string) =>
      (
        (await lab.provider()).accounts as { user_id: string; identities: { provider: string; user_id: string }[] }[]
      ).find((account) =>
        account.identities.some((identity) => `${identity.provider}|${identity.user_id}` === identityId),
      )?.user_id;

    const victim = await startApp({ databaseUrl, port: victimPort });
    const switching = (await appClient(victim.baseUrl).signedIn("ada"))
      .promote("ada", "github|8812")
      .catch(() => undefined);
    try {
      // The provider took the scripted outcome: the unlink has reached it.
      await expect
        .poll(async () => (await lab.get("/api/lab")).body.provider.script.unlink, { timeout: 15_000 })
        .toEqual([]);
    } finally {
      await victim.kill();
    }
    const crashedAt = await databaseNow();
    await switching;
    const victimOperation = await db
      .selectFrom("switch_journal")
      .select("operation_id")
      .orderBy("id", "desc")
      .limit(1)
      .executeTakeFirstOrThrow();

    // Its caller is dead and the unlink not applied yet; then it lands.
    expect(await providerAccountOf("github|8812")).toBe("google-oauth2|104423");
    await expect.poll(() => providerAccountOf("github|8812"), { timeout: 10_000 }).toBe("github|8812");
    const unlink = (await lab.calls()).find((call) => call.method === "DELETE");
    expect(unlink).toMatchObject({ status: 200, outcome: "client-closed", operationId: victimOperation.operation_id });
    expect(Date.parse(unlink!.at)).toBeGreaterThan(crashedAt.getTime());

    await lab.configure({ provider: { latencyMs: 50 } });
    const ada = await lab.signedIn("ada");
    await expect.poll(() => ada.leaseHeld("ada"), { timeout: ttlMs + 5_000 }).toBe(false);
    const next = await ada.promote("ada", "auth0|ada-email");
    expect(next.status).toBe(200);
    expect((await lab.audit()).consistent).toBe(true);
  });
});
