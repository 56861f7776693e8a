import { describe, expect, inject, it } from "vitest";
import { freshLabEachTest } from "./fresh-lab";
import { openEventStream } from "./harness/event-stream";

const { app, session } = freshLabEachTest({ strategy: "lease", reconcileAfterMs: null, provider: { latencyMs: 50 } });

interface Settling {
  consistent: boolean;
  settled: boolean;
  settlingUntil: string | null;
}

/** Audits, one after another, until `done` has settled; each sample with ada's entry. */
async function sampleAuditsUntil(done: Promise<unknown>) {
  let finished = false;
  void done.finally(() => (finished = true));
  const samples: { report: Settling; ada: Settling }[] = [];
  while (!finished) {
    const report = await app.audit();
    samples.push({ report, ada: report.users.find((user: { userId: string }) => user.userId === "ada") });
  }
  return samples;
}

describe("the audit says whether it has settled", () => {
  it("at rest: settled and consistent, at the top and per user, with no bound to wait for", async () => {
    const report = await app.audit();
    expect(report).toMatchObject({ consistent: true, settled: true, settlingUntil: null });
    for (const user of report.users)
      expect(user).toMatchObject({ consistent: true, settled: true, settlingUntil: null });
  });

  it(
    "while a late write may land and its journal entry waits for a repair: unsettled, with no " +
      "bound; settled and consistent once the reconciler repaired it, with no further switch",
    async () => {
      // The unlink is applied 4 s after it was sent, after the caller gave up (renewals cap a 600 ms lease at
      // 1.8 s): the switch answers 504 and its outcome is unknown until the provider's 5 s limit has passed.
      await app.configure({
        leaseTtlMs: 600,
        provider: {
          applyLimitMs: 5_000,
          endpoints: { unlink: { latencyMs: 4_000 } },
          script: { unlink: ["applied-late"] },
        },
      });
      const first = await session.ada.promote("ada", "github|8812");
      expect(first.status).toBe(504);

      // The switch's journal entry is open: something will repair it (the reconciler, the next switch), and
      // nobody knows when. Not a bound, and never a verdict.
      const whileUnknown = await app.audit();
      const ada = whileUnknown.users.find((user: { userId: string }) => user.userId === "ada");
      expect(ada).toMatchObject({ settled: false, settlingUntil: null });
      expect(whileUnknown).toMatchObject({ settled: false, settlingUntil: null });
      // The other users have nothing running.
      for (const other of whileUnknown.users.filter((user: { userId: string }) => user.userId !== "ada"))
        expect(other).toMatchObject({ settled: true, settlingUntil: null });

      // The write lands, and the audit still says it is settling.
      await expect
        .poll(async () => (await app.calls()).find((call) => call.outcome === "applied-late"), { timeout: 10_000 })
        .toBeDefined();
      expect(await app.userAudit("ada")).toMatchObject({ consistent: false, settled: false, settlingUntil: null });
      // Once nothing more can land, the entry still waits for its repair (the reconciler is off): still settling.
      await expect.poll(() => session.ada.leaseHeld("ada"), { timeout: 10_000 }).toBe(false);
      expect(await app.userAudit("ada")).toMatchObject({ consistent: false, settled: false, settlingUntil: null });

      await app.configure({ reconcileAfterMs: 100 });
      await expect
        .poll(
          async () => {
            await app.post("/api/lab/reconcile");
            return app.audit();
          },
          { timeout: 15_000 },
        )
        .toMatchObject({ consistent: true, settled: true, settlingUntil: null });
      const recovered = (await app.events("ada")).find((event) => event.kind === "recovered");
      expect(recovered?.message).toMatch(/finished the link\.$/);
      // Only the one switch was ever asked for; the other lane is the reconciler's, which switches nothing.
      const { operations } = (await app.get("/api/lab/timeline?userId=ada")).body;
      expect(operations.filter((lane: { toIdentityId: string | null }) => lane.toIdentityId !== null)).toMatchObject([
        { toIdentityId: "github|8812", status: 504 },
      ]);
    },
  );

  it(
    "settled as soon as no entry is open and the provider's log has " +
      "every unanswered call: a fenced late write no longer counts",
    async () => {
      // The late unlink lands 8 s after it was sent: the 504, a settings change, the next switch and an audit come
      // before it, on a loaded machine and behind the balancer too; it is refused 4 s before its bound.
      await app.configure({
        leaseTtlMs: 600,
        provider: {
          applyLimitMs: 12_000,
          enforceFencing: true,
          endpoints: { unlink: { latencyMs: 8_000 } },
          script: { unlink: ["applied-late"] },
        },
      });
      expect((await session.ada.promote("ada", "github|8812")).status).toBe(504);
      // With fencing, the next holder reads at once with its newer token: the late unlink will be refused.
      await app.configure({ provider: { endpoints: { unlink: { latencyMs: null } } } });
      expect((await session.ada.promote("ada", "auth0|ada-email")).status).toBe(200);
      // The entry is settled; the lost unlink may still reach the provider, until its bound.
      const beforeRefusal = await app.userAudit("ada");
      expect(beforeRefusal).toMatchObject({ consistent: true, settled: false, settlingUntil: expect.any(String) });

      await expect
        .poll(async () => (await app.calls()).find((call) => call.outcome === "fenced"), { timeout: 20_000 })
        .toBeDefined();
      const refusedAt = Date.now();
      // The log has it: refused when applied, it can no longer land. Settled then, not at the bound.
      expect(await app.userAudit("ada")).toMatchObject({ consistent: true, settled: true, settlingUntil: null });
      expect(Date.parse(beforeRefusal.settlingUntil)).toBeGreaterThan(refusedAt + 1_000);
    },
  );

  it("is never inconsistent and settled during correct back-to-back switches under the lease", async () => {
    await app.configure({ provider: { latencyMs: 500 } });
    const switches = (async () => {
      expect((await session.ada.promote("ada", "github|8812")).status).toBe(200);
      expect((await session.ada.promote("ada", "auth0|ada-email")).status).toBe(200);
    })();
    const samples = await sampleAuditsUntil(switches);
    await switches;

    for (const { report, ada } of samples) {
      // Never "inconsistent" as a verdict: an inconsistent moment is always one in between.
      expect(ada.consistent || !ada.settled, JSON.stringify(ada)).toBe(true);
      expect(report.consistent || !report.settled).toBe(true);
    }
    // The samples did see the switches: settling, and a moment in between when the provider was split.
    expect(samples.some(({ ada }) => !ada.settled && ada.settlingUntil !== null)).toBe(true);
    expect(samples.some(({ ada }) => !ada.settled && !ada.consistent)).toBe(true);
    expect(await app.audit()).toMatchObject({ consistent: true, settled: true, settlingUntil: null });
  });

  it("under a strategy with no bound, a running switch is settling until nobody knows when", async () => {
    await app.configure({ strategy: "none", provider: { latencyMs: 500 } });
    const switching = session.ada.promote("ada", "github|8812");
    await expect.poll(async () => (await app.userAudit("ada")).settled, { timeout: 5_000, interval: 20 }).toBe(false);
    const running = await app.userAudit("ada");
    expect(running.settlingUntil).toBeNull();
    expect((await switching).status).toBe(200);
    expect(await app.userAudit("ada")).toMatchObject({ consistent: true, settled: true, settlingUntil: null });
  });

  it("under a strategy without a journal, a write that got no answer keeps the user settling until the apply limit", async () => {
    await app.configure({
      strategy: "none",
      leaseTtlMs: 600,
      provider: {
        applyLimitMs: 3_000,
        endpoints: { unlink: { latencyMs: 1_500 } },
        script: { unlink: ["applied-late"] },
      },
    });
    const answer = await session.ada.promote("ada", "github|8812");
    expect(answer.status).toBe(504);
    const afterAnswer = await app.userAudit("ada");
    expect(afterAnswer).toMatchObject({ settled: false, settlingUntil: expect.any(String) });
    await expect
      .poll(async () => (await app.calls()).find((call) => call.outcome === "applied-late"), { timeout: 10_000 })
      .toBeDefined();
    const landed = (await app.calls()).find((call) => call.outcome === "applied-late")!;
    expect(Date.parse(landed.at)).toBeLessThanOrEqual(Date.parse(afterAnswer.settlingUntil));
    // Nothing reconciles `none`: once the limit has passed, the split it left is the verdict.
    await expect.poll(async () => (await app.userAudit("ada")).settled, { timeout: 10_000 }).toBe(true);
    expect((await app.userAudit("ada")).consistent).toBe(false);
  });

  it("the stream's audit events carry the same fields, and the last one after a switch has settled", async () => {
    await app.configure({ provider: { latencyMs: 300 } });
    const stream = await openEventStream(`${inject("appUrl")}/api/lab/stream`);
    try {
      await stream.waitFor((message) => message.event === "audit");
      const snapshotLength = stream.messages.length;
      const answer = await session.ada.promote("ada", "github|8812");
      expect(answer.status).toBe(200);
      const ada = (message: { data: { users: { userId: string }[] } }) =>
        message.data.users.find((user) => user.userId === "ada") as unknown as Settling;
      const settling = await stream.waitFor(
        (message) =>
          message.event === "audit" && stream.messages.indexOf(message) >= snapshotLength && !ada(message).settled,
        10_000,
      );
      const settledAgain = await stream.waitFor(
        (message) =>
          message.event === "audit" &&
          stream.messages.indexOf(message) > stream.messages.indexOf(settling) &&
          message.data.settled === true,
        10_000,
      );
      expect(settledAgain.data).toMatchObject({ consistent: true, settled: true, settlingUntil: null });
      expect(ada(settledAgain)).toMatchObject({ consistent: true, settled: true, settlingUntil: null });
    } finally {
      stream.close();
    }
  });
});
