import type { Kysely } from "kysely";
import { describe, expect, it } from "vitest";
import { inMemoryLeaseLock } from "./in-memory.ts";
import type { LeaseLock } from "./lease-lock.ts";
import { observedLease } from "./telemetry.ts";
import { inMemoryTelemetry } from "./test-support/telemetry.ts";
import { LeaseLostError, LeaseUnavailable, withLease } from "./with-lease.ts";

interface JobsDatabase {
  jobs: { id: number; status: string };
}
const db = undefined as unknown as Kysely<JobsDatabase>;

function setUp() {
  const telemetry = inMemoryTelemetry();
  const lock = inMemoryLeaseLock<JobsDatabase, "jobs">(undefined, "jobs");
  lock.addRow(1, { status: "new" });
  return { telemetry, lock, run: observedLease(withLease, telemetry) };
}

describe("the lease in OpenTelemetry", () => {
  it("a won lease: acquire with its fence and expiry, checkpoint held, release; held time and the won count", async () => {
    const { telemetry, lock, run } = setUp();
    await run(lock, 1, { db, ttlMs: 1_000 }, ({ checkpoint }) => checkpoint("save"));
    const spans = telemetry.spans();
    expect(spans.map((span) => [span.name, span.attributes["lease.outcome"]])).toEqual([
      ["lease.acquire", "won"],
      ["lease.renew", "renewed"],
      ["lease.checkpoint", "held"],
      ["lease.release", "released"],
    ]);
    expect(spans[0]!.attributes).toMatchObject({ "lease.table": "jobs", "lease.row_id": "1", "lease.fence": "1" });
    expect(new Date(String(spans[0]!.attributes["lease.expires_at"])).getTime()).toBe(lock.clock.now() + 1_000);
    expect(spans[2]!.attributes).toMatchObject({ "lease.step": "save", "lease.fence": "1" });
    const metrics = await telemetry.metrics();
    expect(metrics["lease.acquisitions"]).toMatchObject({
      unit: "{acquisition}",
      points: [{ attributes: { "lease.outcome": "won" }, value: 1 }],
    });
    expect(metrics["lease.held.duration"]).toMatchObject({ unit: "s", points: [{ value: { count: 1 } }] });
    expect(metrics["lease.acquire.duration"]).toMatchObject({ unit: "s", points: [{ value: { count: 1 } }] });
    expect(metrics["lease.renewals"]).toMatchObject({ points: [{ attributes: { "lease.outcome": "renewed" } }] });
  });

  it("a refusal carries the holder's expiry; a lost lease is the checkpoint's outcome and a loss counted", async () => {
    const { telemetry, lock, run } = setUp();
    const first = await lock.acquire(db, 1, { ttlMs: 1_000 });
    await expect(run(lock, 1, { db, ttlMs: 1_000 }, async () => undefined)).rejects.toBeInstanceOf(LeaseUnavailable);
    expect(telemetry.spans()[0]!.attributes).toMatchObject({
      "lease.outcome": "refused",
      "lease.held_until": first.acquired ? first.lease.expiresAt.toISOString() : "",
    });
    lock.clock.advance(1_001);
    const lost = run(lock, 1, { db, ttlMs: 1_000 }, async ({ checkpoint }) => {
      lock.clock.advance(1_001);
      await lock.acquire(db, 1, { ttlMs: 1_000 });
      await checkpoint("save");
    });
    await expect(lost).rejects.toBeInstanceOf(LeaseLostError);
    const byName = telemetry.spans().filter((span) => span.name !== "lease.acquire");
    expect(byName.map((span) => [span.name, span.attributes["lease.outcome"]])).toEqual([
      ["lease.renew", "lost"],
      ["lease.checkpoint", "lost"],
      ["lease.release", "found-nothing"],
    ]);
    expect(byName[1]!.span.events.map((event) => event.name)).toEqual(["lease.lost"]);
    const metrics = await telemetry.metrics();
    expect(metrics["lease.losses"]!.points.map((point) => point.attributes["lease.step"])).toEqual(["save"]);
    expect(metrics["lease.acquisitions"]!.points.map((point) => point.attributes["lease.outcome"]).sort()).toEqual([
      "refused",
      "won",
    ]);
  });

  it("a failed release is a failed span, and its retry says it is one", async () => {
    const { telemetry, lock } = setUp();
    let failures = 1;
    const flaky: LeaseLock<JobsDatabase, "jobs"> = {
      ...lock,
      async acquire(anyDb, rowId, options) {
        const taken = await lock.acquire(anyDb, rowId, options);
        if (!taken.acquired) return taken;
        const release = () => (failures-- > 0 ? Promise.reject(new Error("connection reset")) : taken.lease.release());
        return { ...taken, lease: { ...taken.lease, release } };
      },
    };
    await observedLease(withLease, telemetry)(flaky, 1, { db, ttlMs: 1_000 }, async () => undefined);
    // The retry comes on a timer of its own (400 ms), past the poll's default second on a loaded machine.
    await expect
      .poll(() => telemetry.spans().filter((span) => span.name === "lease.release").length, { timeout: 10_000 })
      .toBe(2);
    const releases = telemetry.spans().filter((span) => span.name === "lease.release");
    expect(releases.map((span) => span.attributes)).toMatchObject([
      { "lease.outcome": "failed", "lease.release.attempt": 1, "lease.release.retry": false },
      { "lease.outcome": "released", "lease.release.attempt": 2, "lease.release.retry": true },
    ]);
    expect(releases[0]!.span.status).toMatchObject({ code: 2, message: "connection reset" });
  });
});
