import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { startPeer, type RunningApp } from "./harness/app-server";
import { openEventStream, type EventMessage, type EventStreamReader } from "./harness/event-stream";
import { appClient } from "./harness/http-client";
import { freshLabEachTest } from "./fresh-lab";

const { app, session } = freshLabEachTest();
const streamUrl = `${inject("appUrl")}/api/lab/stream`;
const streams: EventStreamReader[] = [];
const open = async (url = streamUrl, headers?: Record<string, string>) => {
  const stream = await openEventStream(url, headers);
  streams.push(stream);
  return stream;
};
afterEach(() => {
  for (const stream of streams.splice(0)) stream.close();
});

const answeredLane = (operationId: string) => (message: { event: string; data: any }) =>
  message.event === "operation" && message.data.operationId === operationId && message.data.answeredAt !== null;

describe("GET /api/lab/stream", () => {
  it("starts with a snapshot, then pushes a switch's lane, lease, provider calls and audit as they happen", async () => {
    await app.configure({ provider: { latencyMs: 100 } });
    const stream = await open();
    // The snapshot (its messages share one id) ends with a resync: the page's own reads may predate the stream.
    const snapshotEnd = await stream.waitFor((message) => message.event === "resync");
    const snapshot = stream.messages.slice(0, stream.messages.indexOf(snapshotEnd) + 1);
    expect(new Set(snapshot.map((message) => message.id)).size).toBe(1);
    expect(snapshot.map((message) => message.event)).toEqual(expect.arrayContaining(["settings", "lease", "audit"]));
    expect(stream.messages.find((message) => message.event === "lease" && message.data.userId === "ada")?.data).toEqual(
      expect.objectContaining({ userId: "ada", held: false, expiresAt: null }),
    );
    // Then `caught-up`, once everything before it has been sent, with the id of the last: the page is live from
    // there, not from the stream's opening.
    const caughtUp = await stream.waitFor((message) => message.event === "caught-up");
    const caughtUpAt = stream.messages.indexOf(caughtUp);
    expect(caughtUpAt).toBeGreaterThan(stream.messages.indexOf(snapshotEnd));
    expect(caughtUp.id).toBe(stream.messages[caughtUpAt - 1]!.id);
    const snapshotLength = stream.messages.length;

    const answer = await session.ada.promote("ada", "github|8812");
    const { operationId } = answer.body;
    const lane = (await stream.waitFor(answeredLane(operationId))).data;
    expect(lane).toMatchObject({ userId: "ada", status: 200, strategy: "lease" });
    const live = stream.messages.slice(snapshotLength);
    // The lane was pushed while it ran, not only at its end.
    expect(live.filter((message) => message.event === "operation").length).toBeGreaterThan(2);
    const leases = live.filter((message) => message.event === "lease").map((message) => message.data);
    expect(leases[0]).toMatchObject({ userId: "ada", held: true, fence: "1", operationId });
    await stream.waitFor((message) => message.event === "lease" && message.data.held === false);
    expect(live.filter((message) => message.event === "provider-call").map((message) => message.data.method)).toEqual([
      "DELETE",
      "POST",
    ]);
    await stream.waitFor((message) => message.event === "audit" && stream.messages.indexOf(message) >= snapshotLength);
    expect(stream.messages.every((message) => message.id !== null)).toBe(true);
  });

  it("gives a streamed provider call and event the id its list gives it, so a page that read it first shows it once", async () => {
    // The second must arrive while the first holds the lease, however far apart a loaded machine sends them.
    await app.configure({ provider: { latencyMs: 1_000 } });
    const stream = await open();
    await stream.waitFor((message) => message.event === "caught-up");
    const answers = await Promise.all([
      session.ada.promote("ada", "github|8812"),
      session.ada.promote("ada", "auth0|ada-email"),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const streamed = async (event: string, count: number) => {
      await expect.poll(() => stream.messages.filter((message) => message.event === event).length).toBe(count);
      return stream.messages.filter((message) => message.event === event).map((message) => message.data);
    };
    const calls = (await app.get("/api/lab/provider")).body.calls as { id: string; method: string }[];
    expect(calls.map((call) => call.method)).toEqual(["DELETE", "POST"]);
    expect(await streamed("provider-call", 2)).toEqual(calls);
    const events = (await app.get("/api/lab/events?userId=ada")).body.events as { id: string; kind: string }[];
    expect(events.map((event) => event.kind)).toEqual(["refused"]);
    expect(await streamed("event", 1)).toEqual(events);
  });

  it("resumes after Last-Event-ID with exactly what was missed", async () => {
    const first = await open();
    await first.waitFor((message) => message.event === "audit");
    const lastEventId = first.lastEventId()!;
    first.close();

    await app.configure({ provider: { latencyMs: 20 } });
    const answer = await session.ada.promote("ada", "github|8812");
    const resumed = await open(streamUrl, { "Last-Event-ID": lastEventId });
    await resumed.waitFor(answeredLane(answer.body.operationId));
    const [boot] = lastEventId.split("-");
    if (resumed.messages[0]!.id!.split("-")[0] !== boot) {
      // Behind a balancer (the `production` project) it may land on the other instance, whose ids are its own:
      // that one never sent what was missed, so it answers a snapshot, which begins with the settings in force.
      expect(resumed.messages[0]).toMatchObject({ event: "settings", data: { provider: { latencyMs: 20 } } });
      return;
    }
    // What was missed, then `caught-up` with the id of the last message sent (Last-Event-ID's if none was).
    const caughtUp = await resumed.waitFor((message) => message.event === "caught-up");
    const caughtUpAt = resumed.messages.indexOf(caughtUp);
    expect(caughtUp.id).toBe(caughtUpAt === 0 ? lastEventId : resumed.messages[caughtUpAt - 1]!.id);
    // No snapshot (whose messages share one id): every message since Last-Event-ID, once each and in order.
    const ids = resumed.messages
      .filter((message) => message !== caughtUp)
      .map((message) => Number(message.id!.split("-")[1]));
    const next = Number(lastEventId.split("-")[1]) + 1;
    expect(ids).toEqual(ids.map((_, index) => next + index));
    // Among them, last of its kind, the settings change made while it was away. (Not always the first: the
    // audit after the test's reset comes 150 ms after it, and may be published after the first stream closed.)
    const settingsMissed = resumed.messages.filter((message) => message.event === "settings").at(-1);
    expect(settingsMissed).toMatchObject({ data: { provider: { latencyMs: 20 } } });
    // And before `caught-up`: a page shown live has what it missed.
    expect(resumed.messages.indexOf(settingsMissed!)).toBeLessThan(caughtUpAt);
  });

  it("after a moment nobody watched, when the database told nothing, Last-Event-ID gets a snapshot, not what was kept", async () => {
    const instanceUrl = `${inject("instanceUrl")}/api/lab/stream`;
    const first = await open(instanceUrl);
    await first.waitFor((message) => message.event === "audit");
    const lastEventId = first.lastEventId()!;
    first.close();
    // As 30 s after the last client left: the lab's notifications are off (migration 0016).
    const database = new pg.Client({ connectionString: inject("databaseUrl") });
    await database.connect();
    await database.query("UPDATE lab_watch SET until = '-infinity'").finally(() => database.end());
    const answer = await session.ada.promote("ada", "github|8812");
    expect(answer.status).toBe(200);

    const resumed = await open(instanceUrl, { "Last-Event-ID": lastEventId });
    const audit = await resumed.waitFor((message) => message.event === "audit");
    // A snapshot (its messages share one id), with the lease as the switch left it: free, its fence taken.
    const snapshot = resumed.messages.slice(0, resumed.messages.indexOf(audit) + 1);
    expect(snapshot[0]).toMatchObject({ event: "settings" });
    expect(new Set(snapshot.map((message) => message.id)).size).toBe(1);
    expect(snapshot.find((message) => message.event === "lease" && message.data.userId === "ada")?.data).toMatchObject({
      held: false,
      fence: "1",
    });
    // Then the page reads again what it reads by itself (as after every snapshot): the events of that moment
    // came by no notification.
    const resync = await resumed.waitFor((message) => message.event === "resync");
    expect(resumed.messages.indexOf(resync)).toBe(resumed.messages.indexOf(audit) + 1);
    expect(resync.id).toBe(audit.id);
    // Once only: the start-over's own, published while the snapshot was read, would have the page read it twice.
    // (The audit computed after the catch-up comes after anything sent with it.)
    await resumed.waitFor(
      (message) => message.event === "audit" && resumed.messages.indexOf(message) > resumed.messages.indexOf(resync),
    );
    expect(resumed.messages.filter((message) => message.event === "resync")).toHaveLength(1);
  });

  it("a client watching when the gate is found to have closed meanwhile is resynced, and its stream ends for a snapshot", async () => {
    const watching = await open(`${inject("instanceUrl")}/api/lab/stream`);
    const caughtUp = await watching.waitFor((message) => message.event === "audit");
    // As if the instance's writes had stalled past the gate's 30 s: its next one (within 5 s) finds it closed.
    const database = new pg.Client({ connectionString: inject("databaseUrl") });
    await database.connect();
    await database.query("UPDATE lab_watch SET until = '-infinity'").finally(() => database.end());
    await watching.waitFor(
      (message) =>
        message.event === "resync" && watching.messages.indexOf(message) > watching.messages.indexOf(caughtUp),
      10_000,
    );
    await expect(watching.waitFor(() => false, 5_000)).rejects.toThrow("the stream ended");
    // Its reconnection, after the resync it got, is read again: a snapshot (one id), not what was kept.
    const again = await open(`${inject("instanceUrl")}/api/lab/stream`, { "Last-Event-ID": watching.lastEventId()! });
    const audit = await again.waitFor((message) => message.event === "audit");
    const snapshot = again.messages.slice(0, again.messages.indexOf(audit) + 1);
    expect(snapshot[0]).toMatchObject({ event: "settings" });
    expect(new Set(snapshot.map((message) => message.id)).size).toBe(1);
  });

  it("audits again once an answered lane's row is written, however late that write comes", async () => {
    // The switch and the stream on one instance (in the production shape too): its own lanes reach its stream
    // from memory, before their rows, which are what the audit reads.
    const instanceUrl = inject("instanceUrl");
    // 1.5 s calls: the row must be locked before the answer's write, on a loaded machine too.
    await app.configure({ strategy: "none", provider: { latencyMs: 1_500 } });
    const stream = await open(`${instanceUrl}/api/lab/stream`);
    await stream.waitFor((message) => message.event === "audit");
    const holder = new pg.Client({ connectionString: inject("databaseUrl") });
    await holder.connect();
    try {
      const switching = appClient(instanceUrl, session.ada.cookie).promote("ada", "github|8812");
      // Without a lease, a lane's row is written as its request starts; holding it makes the answer's write wait.
      await expect
        .poll(async () => (await holder.query("SELECT 1 FROM operation_lanes WHERE user_id = 'ada'")).rowCount, {
          timeout: 3_000,
        })
        .toBe(1);
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM operation_lanes WHERE user_id = 'ada' FOR UPDATE");
      const answered = await stream.waitFor(
        (message) => message.event === "operation" && message.data.answeredAt !== null,
        10_000,
      );
      const after = (message: EventMessage, than: EventMessage) =>
        message.event === "audit" && stream.messages.indexOf(message) > stream.messages.indexOf(than);
      // The audit after the answer read the row still unanswered: a request nothing bounds.
      const unsettled = await stream.waitFor((message) => after(message, answered));
      expect(unsettled.data).toMatchObject({ settled: false, settlingUntil: null });
      await holder.query("COMMIT");
      expect((await switching).status).toBe(200);
      const settled = await stream.waitFor((message) => after(message, unsettled) && message.data.settled);
      expect(settled.data).toMatchObject({ consistent: true, settled: true });
    } finally {
      await holder.end();
    }
  });

  it("a lab reset tells each user's lease free again: a lease left held before it is not shown after", async () => {
    const stream = await open();
    await stream.waitFor((message) => message.event === "caught-up");
    // A holder that never releases (its process died): the lease is held for a minute.
    const db = new pg.Client({ connectionString: inject("databaseUrl") });
    await db.connect();
    try {
      await db.query(`UPDATE users SET identity_action_locked_at = now(), identity_action_locked_until = now() + interval '1 minute',
                              identity_action_lock_token = gen_random_uuid(), identity_action_fence = identity_action_fence + 1
                        WHERE id = 'ada'`);
    } finally {
      await db.end();
    }
    const held = await stream.waitFor(
      (message) => message.event === "lease" && message.data.userId === "ada" && message.data.held === true,
    );
    await app.reset();
    const reset = await stream.waitFor((message) => message.event === "reset");
    const leasesSince = stream.messages
      .slice(stream.messages.indexOf(held) + 1, stream.messages.indexOf(reset))
      .filter((message) => message.event === "lease" && message.data.userId === "ada");
    expect(leasesSince.at(-1)?.data).toMatchObject({ userId: "ada", held: false, expiresAt: null });
  });

  it("answers an unknown Last-Event-ID with a snapshot", async () => {
    const stream = await open(streamUrl, { "Last-Event-ID": "nonsense" });
    await stream.waitFor((message) => message.event === "audit");
    expect(stream.messages[0]!.event).toBe("settings");
  });
});

describe("two app instances", () => {
  let peer: RunningApp;
  beforeAll(async () => {
    peer = await startPeer(inject("databaseUrl"));
  });
  afterAll(() => peer?.stop());

  it("a switch run on one instance reaches the other instance's stream", async () => {
    const stream = await open();
    await stream.waitFor((message) => message.event === "audit");
    const onPeer = await appClient(peer.baseUrl).signedIn("ada");
    const answer = await onPeer.promote("ada", "github|8812");
    expect(answer.status).toBe(200);
    const lane = (await stream.waitFor(answeredLane(answer.body.operationId))).data;
    expect(lane.instance).toBe("peer");
  });

  it("a second page joining while the other instance's switch is paused is shown it paused, as the first page was", async () => {
    // A pause longer than the wait below, and a TTL long enough that no renewal changes the lane meanwhile.
    await app.configure({ leaseTtlMs: 30_000, faults: { stall: { at: "acquired", ms: 6_000 } } });
    const first = await open();
    await first.waitFor((message) => message.event === "caught-up");
    const onPeer = await appClient(peer.baseUrl).signedIn("ada");
    const answering = onPeer.promote("ada", "github|8812");
    const pausedNow = (message: EventMessage) =>
      message.event === "operation" &&
      message.data.instance === "peer" &&
      message.data.phases.some(
        (phase: { name: string; endedAt: string | null }) => phase.name === "paused" && !phase.endedAt,
      );
    const paused = (await first.waitFor(pausedNow)).data;
    // The peer tells its running lanes again when a page joins; this instance had shown that version already.
    const second = await open();
    const shown = await second.waitFor(
      (message) => message.event === "operation" && message.data.operationId === paused.operationId,
    );
    expect(pausedNow(shown)).toBe(true);
    expect((await answering).status).toBe(200);
  });
});
