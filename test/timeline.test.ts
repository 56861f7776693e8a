import { describe, expect, it } from "vitest";
import type { Lane } from "../lib/lab/lane";
import { freshLabEachTest } from "./fresh-lab";

const { app, session } = freshLabEachTest();

const timeline = async (query = "userId=ada") =>
  (await app.get(`/api/lab/timeline?${query}`)).body.operations as Lane[];
const ms = (iso: string | null) => Date.parse(iso!);

describe("GET /api/lab/timeline", () => {
  it("records a lease switch's phases in order, within the request's time, with its lease", async () => {
    await app.configure({ provider: { latencyMs: 50 } });
    const answer = await session.ada.promote("ada", "github|8812");
    expect(answer.status).toBe(200);

    const [lane] = await timeline();
    expect(lane).toMatchObject({
      operationId: answer.body.operationId,
      userId: "ada",
      strategy: "lease",
      toIdentityId: "github|8812",
      status: 200,
      problemType: null,
    });
    // The ownership check before each irreversible step rides on the journal's write: no renewal phase
    // (the heartbeat renews only every TTL/3, and this switch is shorter than that).
    expect(lane!.phases.map((phase) => `${phase.name} ${phase.outcome}`)).toEqual([
      "acquire won",
      "unlink 200",
      "link 201",
      "save saved",
      "release released",
    ]);
    let previousEnd = ms(lane!.requestedAt);
    for (const phase of lane!.phases) {
      expect(ms(phase.startedAt)).toBeGreaterThanOrEqual(previousEnd);
      expect(ms(phase.endedAt)).toBeGreaterThanOrEqual(ms(phase.startedAt));
      previousEnd = ms(phase.endedAt);
    }
    expect(previousEnd).toBeLessThanOrEqual(ms(lane!.answeredAt));
    expect(ms(lane!.phases.find((phase) => phase.name === "unlink")!.endedAt)).toBeGreaterThanOrEqual(
      ms(lane!.phases.find((phase) => phase.name === "unlink")!.startedAt) + 50,
    );
    expect(lane!.lease!.fence).toBe("1");
    expect(ms(lane!.lease!.expiresAt)).toBeGreaterThan(ms(lane!.lease!.acquiredAt));
    // Released by the release phase, well before its TTL: that is when it stopped holding.
    const release = lane!.phases.find((phase) => phase.name === "release")!;
    expect(ms(lane!.lease!.releasedAt)).toBeGreaterThanOrEqual(ms(release.startedAt));
    expect(ms(lane!.lease!.releasedAt)).toBeLessThanOrEqual(ms(release.endedAt));
    expect(ms(lane!.lease!.releasedAt)).toBeLessThan(ms(lane!.lease!.expiresAt));
  });

  it("leaves releasedAt null for a lease kept for an unknown outcome, and for one a crash left to expire", async () => {
    await app.configure({
      leaseTtlMs: 600,
      provider: { latencyMs: 50, applyLimitMs: 2_000, script: { unlink: ["timeout"] } },
    });
    expect((await session.ada.promote("ada", "github|8812")).status).toBe(504);
    const [kept] = await timeline();
    expect(kept!.phases.find((phase) => phase.name === "release")).toMatchObject({ outcome: "kept" });
    expect(kept!.lease!.releasedAt).toBeNull();
    expect(ms(kept!.lease!.expiresAt)).toBeGreaterThan(ms(kept!.answeredAt));

    await app.reset();
    await app.configure({ provider: { latencyMs: 50 }, faults: { crash: "after-acquire" } });
    const ada = await app.signedIn("ada");
    expect((await ada.promote("ada", "github|8812")).status).toBeGreaterThanOrEqual(500);
    const [crashed] = await timeline();
    expect(crashed!.phases.map((phase) => phase.name)).toContain("crashed");
    expect(crashed!.phases.map((phase) => phase.name)).not.toContain("release");
    expect(crashed!.lease).toMatchObject({ releasedAt: null });
  });

  it("draws a recovery's wait for the crashed switch's calls to stop being able to land as a waiting phase", async () => {
    // No fencing (the default): only the provider's apply limit past the crashed lease shuts its calls out.
    await app.configure({
      leaseTtlMs: 2_000,
      provider: { latencyMs: 50, applyLimitMs: 1_000 },
      faults: { crash: "after-unlink" },
    });
    const crashed = await session.ada.promote("ada", "github|8812");
    expect(crashed.status).toBeGreaterThanOrEqual(500);
    await app.configure({ faults: { crash: null } });
    await expect.poll(() => session.ada.leaseHeld("ada"), { timeout: 5_000 }).toBe(false);
    const answer = await session.ada.promote("ada", "github|8812");
    expect(answer.status).toBe(200);

    const lanes = await timeline();
    const crashedLane = lanes.find((each) => each.phases.some((phase) => phase.name === "crashed"))!;
    const lane = lanes.find((each) => each.operationId === answer.body.operationId)!;
    // The lease is renewed meanwhile, as during any long step.
    const steps = lane.phases.filter((phase) => phase.name !== "renew");
    expect(steps.slice(0, 3).map((phase) => `${phase.name} ${phase.outcome}`)).toEqual([
      "acquire took-over",
      "waiting settled",
      "recover 200",
    ]);
    const waiting = steps[1]!;
    expect(waiting.detail).toContain(`operation ${crashedLane.operationId.slice(0, 8)}'s calls`);
    expect(ms(waiting.endedAt)).toBeGreaterThan(ms(waiting.startedAt));
  });

  it("gives a refused request a lane of its own: refused at acquisition, no provider calls, an event", async () => {
    // The second must arrive while the first holds the lease (two calls), however far apart a loaded machine sends.
    await app.configure({ provider: { latencyMs: 1_500 } });
    const answers = await Promise.all([
      session.ada.promote("ada", "github|8812"),
      session.ada.promote("ada", "auth0|ada-email"),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const winner = answers.find((answer) => answer.status === 200)!.body.operationId;

    const lanes = await timeline();
    expect(lanes).toHaveLength(2);
    const refused = lanes.find((lane) => lane.status === 409)!;
    expect(refused.problemType).toMatch(/\/operation-in-progress$/);
    expect(refused.phases.map((phase) => `${phase.name} ${phase.outcome}`)).toEqual(["acquire refused"]);
    expect(refused.phases[0]!.detail).toMatch(new RegExp(`^0 rows: held by operation ${winner.slice(0, 8)} until `));
    expect(refused.lease).toBeNull();
    const calls = await app.calls();
    expect(calls.filter((call) => call.operationId === refused.operationId)).toEqual([]);
    expect(calls.every((call) => call.operationId === winner)).toBe(true);
    // The two requests overlap in time: the refusal came while the winner held the lease.
    const won = lanes.find((lane) => lane.operationId === winner)!;
    expect(ms(refused.answeredAt)).toBeLessThan(ms(won.answeredAt));
    expect(ms(refused.requestedAt)).toBeLessThan(ms(won.answeredAt));

    const events = await app.events("ada");
    expect(events.find((event) => event.kind === "refused")?.message).toMatch(
      new RegExp(`^Operation ${refused.operationId.slice(0, 8)} refused at .*: operation ${winner.slice(0, 8)} holds`),
    );
  });

  it("shows `transaction` waiting for its pooled connection and its row lock", async () => {
    await app.configure({ strategy: "transaction", provider: { latencyMs: 1_000 } });
    const answers = await Promise.all([
      session.ada.promote("ada", "github|8812"),
      session.ada.promote("ada", "github|8812"),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    const lanes = await timeline();
    expect(lanes.map((lane) => lane.strategy)).toEqual(["transaction", "transaction"]);
    const lockWaits = lanes.map((lane) =>
      lane.phases.find((phase) => phase.name === "waiting" && phase.detail!.includes("row lock"))!,
    );
    // The second waited for the row lock while the first made its provider calls: two of them, less however late
    // the second came (up to one call's time on a loaded machine).
    const longest = Math.max(...lockWaits.map((phase) => ms(phase.endedAt) - ms(phase.startedAt)));
    expect(longest).toBeGreaterThanOrEqual(1_000);
    expect(lanes.every((lane) => lane.phases[0]!.detail === "for a pooled connection")).toBe(true);
  });

  it("answers bad input with a 4xx problem", async () => {
    for (const [query, status] of [
      ["sinceMs=abc", 400],
      ["sinceMs=-5", 400],
      ["sinceMs=0", 400],
      ["sinceMs=99999999999", 400],
      ["userId=nobody", 404],
      ["userId=", 400],
    ] as const) {
      const answer = await app.get(`/api/lab/timeline?${query}`);
      expect(answer.status, query).toBe(status);
      expect(answer.headers.get("content-type")).toBe("application/problem+json");
    }
    const answer = await app.get("/api/lab/timeline");
    expect(answer.status).toBe(200);
    expect(Date.parse(answer.body.now)).not.toBeNaN();
    expect(answer.body.operations).toEqual([]);
  });
});
