/**
 * A switch's lane while it runs, between two instances: told to the other instances only while one of them
 * watches (has clients on its stream), and told whole, at once, to one that starts watching mid-switch. With
 * nobody watching, the database tells nothing of the lease and the lanes either (migration 0016).
 * The tests run in order: the first needs that no stream has ever been open on this file's database.
 */
import pg from "pg";
import { afterAll, afterEach, beforeAll, expect, inject, it } from "vitest";
import { startPeer, type RunningApp } from "./harness/app-server";
import { openEventStream, type EventMessage, type EventStreamReader } from "./harness/event-stream";
import { appClient, type AppClient } from "./harness/http-client";
import { freshLabEachTest } from "./fresh-lab";

const { app } = freshLabEachTest();
let peer: RunningApp;
let onPeer: AppClient;
const streams: EventStreamReader[] = [];

beforeAll(async () => {
  peer = await startPeer(inject("databaseUrl"));
});
afterAll(() => peer?.stop());
afterEach(() => {
  for (const stream of streams.splice(0)) stream.close();
});

const openStream = async () => {
  const stream = await openEventStream(`${inject("appUrl")}/api/lab/stream`);
  streams.push(stream);
  await stream.waitFor((message) => message.event === "audit");
  return stream;
};
const peersRunningLane = (message: EventMessage) =>
  message.event === "operation" && message.data.instance === "peer" && message.data.answeredAt === null;

it("with no stream open on any instance, a switch notifies nothing: its lease, its lane (running, written), its calls", async () => {
  const listener = new pg.Client({ connectionString: inject("databaseUrl") });
  await listener.connect();
  const heard: { kind: string; operationId?: string }[] = [];
  listener.on("notification", ({ payload }) => heard.push(JSON.parse(payload ?? "{}")));
  await listener.query("LISTEN lab_stream");
  try {
    await app.configure({ provider: { latencyMs: 200 } });
    onPeer = await appClient(peer.baseUrl).signedIn("ada");
    const answer = await onPeer.promote("ada", "github|8812");
    expect(answer.status).toBe(200);
    // The lane's row is written at the answer; a notification sent after it arrives after any the switch sent.
    const laneWritten = async () =>
      (await listener.query("SELECT 1 FROM operation_lanes WHERE operation_id = $1", [answer.body.operationId]))
        .rowCount === 1;
    await expect.poll(laneWritten).toBe(true);
    await listener.query(`SELECT pg_notify('lab_stream', '{"kind":"marker"}')`);
    await expect.poll(() => heard.some((message) => message.kind === "marker")).toBe(true);
    expect(heard.map((message) => message.kind)).toEqual(["marker"]);
  } finally {
    await listener.end();
  }
});

it("while a stream is open on one instance, the other tells it a switch's lane as it runs", async () => {
  await app.configure({ provider: { latencyMs: 300 } });
  const stream = await openStream();
  onPeer = await appClient(peer.baseUrl).signedIn("ada");
  const answering = onPeer.promote("ada", "github|8812");
  const running = (await stream.waitFor(peersRunningLane)).data;
  const answer = await answering;
  expect(running.operationId).toBe(answer.body.operationId);
});

it("a stream opened on one instance mid-switch gets the other's running lane at once, not at its next change", async () => {
  // The switch pauses 4 s once it holds the lease: a lane told before its unlink began was told at the opening.
  await app.configure({ provider: { latencyMs: 50 }, faults: { stall: { at: "acquired", ms: 4_000 } } });
  onPeer = await appClient(peer.baseUrl).signedIn("ada");
  const answering = onPeer.promote("ada", "github|8812");
  await expect.poll(() => onPeer.leaseHeld("ada")).toBe(true);
  const stream = await openStream();
  const running = (await stream.waitFor(peersRunningLane, 3_000)).data;
  expect(running.phases.map((phase: { name: string }) => phase.name)).not.toContain("unlink");
  expect((await answering).status).toBe(200);
});

it("a stream opened mid-switch on the instance that runs it shows that lane at once", async () => {
  await app.configure({ provider: { latencyMs: 50 }, faults: { stall: { at: "acquired", ms: 4_000 } } });
  onPeer = await appClient(peer.baseUrl).signedIn("ada");
  const answering = onPeer.promote("ada", "github|8812");
  await expect.poll(() => onPeer.leaseHeld("ada")).toBe(true);
  const stream = await openEventStream(`${peer.baseUrl}/api/lab/stream`);
  streams.push(stream);
  const running = (await stream.waitFor(peersRunningLane, 3_000)).data;
  expect(running.phases.map((phase: { name: string }) => phase.name)).not.toContain("unlink");
  expect((await answering).status).toBe(200);
});
