/**
 * The lab's live feed for `GET /api/lab/stream`: one hub per instance hears the `lab_stream` and
 * `lab_settings` notifications (on the instance's one listening connection) and fans them out in memory
 * to this instance's event-stream clients, with this instance's pool and the audit recomputed after each
 * answer. Messages are numbered per process (`{boot}-{n}`) and the last ones kept, so a client that
 * reconnects with `Last-Event-ID` gets what it missed; one that missed more gets a fresh snapshot.
 */
import { randomUUID } from "node:crypto";
import { sql, type Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { onPoolChange, poolStats } from "../core/db";
import { notify, notifyAll, subscribe } from "../core/notifications";
import { processSingleton } from "../core/process-singleton";
import { auditConsistency } from "./audit";
import { instrumentDb } from "./instrument-db";
import { labSettings } from "./settings-snapshot";
import { announcementFrom, labSettingsChannel } from "./settings-store";
import { instanceId } from "./instance";
import type { Lane } from "./lane";
import { liveLanes } from "./live-lanes";
import { readLanes, readTimeline } from "./timeline";
import { gateMayHaveClosed, holdEveryMs, holdGateOpen } from "./watch-gate";
import { clientJoined, clientLeft, hearWatchers, othersWatch } from "./watchers";

export interface StreamMessage {
  id: string;
  event: string;
  data: unknown;
}

interface Client {
  hear(message: StreamMessage): void;
  /** Whether its catch-up has been sent: until then what it hears waits, after what it will be sent. */
  caughtUp(): boolean;
  /** Ends its stream: the browser reconnects with the last id it got. */
  end(): void;
}

interface Hub {
  boot: string;
  counter: number;
  kept: StreamMessage[];
  clients: Set<Client>;
  started: boolean;
  /** Settled while this instance listens on the lab's channel. */
  listening: Listening;
  lastPool: string;
  auditDue: ReturnType<typeof setTimeout> | null;
  auditRunning: boolean;
  auditAgain: boolean;
  /** Audits again once an unsettled audit's bound has passed: nothing else says that it settled. */
  settledCheck: ReturnType<typeof setTimeout> | null;
  /** Keeps the database's notifications on while this instance has clients (watch-gate.ts). */
  gateHold: ReturnType<typeof setInterval> | null;
  /** The gate's write under way, which a client's catch-up and the schedule share. */
  holding: Promise<void> | null;
  /** The messages numbered above it are a complete account: the gate has not been seen closed since. */
  completeAfter: number;
}

export const labStreamChannel = "lab_stream";

/** Whether this instance listens on the lab's channel: `promise` settles once it does. */
interface Listening {
  promise: Promise<void>;
  resolve(): void;
}

function notListening(): Listening {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}

const keptMessages = 2_000;
/** How far back a snapshot's lanes reach. */
const snapshotSinceMs = 10 * 60_000;

const hub = processSingleton<Hub>("Stream", () => ({
  boot: randomUUID().slice(0, 8),
  counter: 0,
  kept: [],
  clients: new Set(),
  started: false,
  listening: notListening(),
  lastPool: "",
  auditDue: null,
  auditRunning: false,
  auditAgain: false,
  settledCheck: null,
  gateHold: null,
  holding: null,
  completeAfter: 0,
}));

/** Tells every instance's clients to read everything again (after a lab reset). */
export const announceReset = (db: Kysely<Database>): Promise<void> =>
  notify(db, labStreamChannel, JSON.stringify({ kind: "reset" }));

/** The id of the last message published: what a message that is not one of them (a snapshot's) carries. */
const lastPublishedId = () => `${hub.boot}-${hub.counter}`;

function publish(event: string, data: unknown): void {
  const message = { id: `${hub.boot}-${++hub.counter}`, event, data };
  hub.kept.push(message);
  if (hub.kept.length > keptMessages) hub.kept.shift();
  for (const client of hub.clients) client.hear(message);
}

/** How long changes gather before the audit is computed again. */
const auditGatherMs = 150;

/**
 * The audit after things change, for the clients there are: changes gather for a moment, one computation
 * runs at a time, and a change during one asks for one more, so the last audit sent follows the last change.
 */
function auditSoon(): void {
  if (hub.auditRunning) hub.auditAgain = true;
  else hub.auditDue ??= setTimeout(() => void audit(), auditGatherMs);
}

async function audit(): Promise<void> {
  hub.auditDue = null;
  if (hub.clients.size === 0) return;
  hub.auditRunning = true;
  try {
    const report = await auditConsistency(instrumentDb());
    publish("audit", report);
    if (hub.settledCheck) clearTimeout(hub.settledCheck);
    hub.settledCheck = null;
    if (!report.settled && report.settlingUntil !== null) {
      // The bound is the database's clock; this process's is the same to within milliseconds.
      const dueInMs = Math.max(0, Date.parse(report.settlingUntil) - Date.now()) + 100;
      hub.settledCheck = setTimeout(auditSoon, dueInMs);
      hub.settledCheck.unref?.();
    }
  } catch (error) {
    console.error("[stream] audit failed:", error);
  } finally {
    hub.auditRunning = false;
    if (hub.auditAgain) {
      hub.auditAgain = false;
      auditSoon();
    }
  }
}

function sendPoolIfChanged(): void {
  if (hub.clients.size === 0) return;
  const pool = { instance: instanceId, ...poolStats() };
  const seen = JSON.stringify(pool);
  if (seen === hub.lastPool) return;
  hub.lastPool = seen;
  publish("pool", pool);
}

/**
 * A lane of this instance, as it changes (`version` grows with each change; the recorder goes on changing the
 * same object): its clients see it at once, from memory. Other instances hear of it when its row is written
 * (lane-writer.ts), at its answer; while it runs, from `relayRunningLane`.
 */
export function publishLane(lane: Lane, version: number): void {
  if (lane.answeredAt === null) relayRunningLane(lane, version);
  // A copy as it is now: the message is kept for clients that reconnect, and the lane will have changed.
  if (hub.started) showLane(structuredClone(lane));
}

function showLane(lane: Lane): void {
  if (!hub.started) return;
  publish("operation", lane);
  // A request that starts, moves or answers changes whether the user has settled.
  auditSoon();
}

/**
 * A running lane, told to the other instances in a notification of its own while another instance watches
 * (watchers.ts): its row is written only at the answer, so a client whose stream is on another instance than
 * the switch (behind a balancer) would see it appear whole at its end. Changes gather for a moment, each lane's
 * last one told as it is then (the version of its last change: the recorder's object has changed since), all in
 * one statement on the lab's own pool, off the switch's path. A lane answered meanwhile is told by its row; one
 * too large for a notification (8,000 bytes) too, at its answer.
 */
const running = { due: new Map<string, RunningLane>(), flushDue: null as ReturnType<typeof setTimeout> | null };
const runningGatherMs = 40;
const notificationLimitBytes = 7_900;

interface RunningLane {
  kind: "operation-running";
  instance: string;
  version: number;
  lane: Lane;
}

function relayRunningLane(lane: Lane, version: number): void {
  if (!othersWatch()) return;
  running.due.set(lane.operationId, { kind: "operation-running", instance: instanceId, version, lane });
  running.flushDue ??= setTimeout(() => {
    running.flushDue = null;
    const payloads = [...running.due.values()]
      .filter((message) => message.lane.answeredAt === null)
      .map((message) => JSON.stringify(message))
      .filter((payload) => Buffer.byteLength(payload) <= notificationLimitBytes);
    running.due.clear();
    notifyAll(instrumentDb(), labStreamChannel, payloads).catch((error: unknown) =>
      console.error("[stream] running lanes were not told to the other instances:", error),
    );
  }, runningGatherMs);
}

/**
 * Tells the other instances this instance's running lanes while one of them watches: from the lab's start, and
 * at once, whole, when one gets a client (which would otherwise see them only at their next change).
 */
export const relayRunningLanesToWatchers = (): void =>
  hearWatchers(() => {
    for (const { lane, version } of liveLanes()) relayRunningLane(lane, version);
  });

/**
 * What this instance has shown of other instances' lanes: the last running version of each, and the ones
 * whose row it has read, after which a running notification that arrives late is stale.
 */
const othersSeen = { versions: new Map<string, number>(), written: new Set<string>() };
const othersRemembered = 2_000;

function remember<T>(collection: Map<string, T> | Set<string>, key: string, add: () => void): void {
  collection.delete(key);
  add();
  if (collection.size > othersRemembered) collection.delete(collection.keys().next().value!);
}

/**
 * Shows another instance's running lane, unless an older version than one shown already (its notifications came
 * late). The same version again is shown again: it is told again, whole, when a page joins, which has not seen it.
 */
function showOthersRunningLane({ lane, version }: RunningLane): void {
  const seen = othersSeen.versions.get(lane.operationId) ?? 0;
  if (othersSeen.written.has(lane.operationId) || version < seen) return;
  remember(othersSeen.versions, lane.operationId, () => othersSeen.versions.set(lane.operationId, version));
  showLane(lane);
}

/** Another instance's lanes announced meanwhile, read together once a frame has passed. */
const announced = new Set<string>();
let announcedDue: ReturnType<typeof setTimeout> | null = null;
const announcedGatherMs = 25;

async function readAnnounced(): Promise<void> {
  announcedDue = null;
  const operationIds = [...announced];
  announced.clear();
  for (const lane of await readLanes(instrumentDb(), operationIds)) {
    remember(othersSeen.written, lane.operationId, () => othersSeen.written.add(lane.operationId));
    showLane(lane);
  }
}

async function onNotification(payload: string): Promise<void> {
  const message = JSON.parse(payload) as { kind: string; data?: unknown; operationId?: string; instance?: string };
  if (message.kind === "operation-running" || message.kind === "operation") {
    // With nobody to show them to, another instance's lanes are not read: what is kept is no account of them.
    if (hub.clients.size === 0 && message.instance !== instanceId) hub.completeAfter = hub.counter;
  }
  if (message.kind === "operation-running") {
    if (message.instance !== instanceId && hub.clients.size > 0) showOthersRunningLane(message as RunningLane);
    return;
  }
  if (message.kind === "operation") {
    if (hub.clients.size === 0) return;
    // This instance's own lanes were shown as they changed, before their rows were written; but the audit reads
    // the rows (whether a request was answered), so it runs again once they are. Others' are read to be shown.
    if (message.instance === instanceId) return auditSoon();
    announced.add(message.operationId!);
    // Lanes not read are shown to nobody, and no later message brings them: the clients start over, and their
    // reconnection's snapshot reads them.
    announcedDue ??= setTimeout(
      () =>
        void readAnnounced().catch((error: unknown) => {
          console.error("[stream] lanes not read:", error);
          startOver();
        }),
      announcedGatherMs,
    );
    return;
  }
  publish(message.kind, message.data ?? {});
  if (["provider-call", "lease", "reset"].includes(message.kind)) auditSoon();
}

/**
 * Resolves once this instance listens on the lab's channel (again, after a lost connection): a gate opened, or
 * a catch-up read, before then would not be followed by what it then missed.
 */
function startHub(): Promise<void> {
  if (hub.started) return hub.listening.promise;
  hub.started = true;
  let connectedBefore = false;
  subscribe(labStreamChannel, {
    onMessage: (payload) =>
      void onNotification(payload).catch((error: unknown) => console.error("[stream] bad notification:", error)),
    // Notifications sent while the listening connection was down are lost: clients must read again.
    onConnect: () => {
      if (connectedBefore) startOver();
      connectedBefore = true;
      hub.listening.resolve();
    },
    onDisconnect: () => {
      hub.listening = notListening();
    },
  });
  subscribe(labSettingsChannel, { onMessage: (payload) => publish("settings", announcementFrom(payload).settings) });
  // The pool gauge is sent when the pool changes, never sampled.
  onPoolChange(sendPoolIfChanged);
  return hub.listening.promise;
}

/**
 * Everything a client shows, as messages, all carrying the id of the last message sent before it. It ends with
 * `resync`: what the page reads by itself (events, calls, identities, holders) is not in it, and the page's reads
 * may predate this stream (made as the page loaded, before the instance relayed to it, or before a reconnection
 * that missed more than was kept): a change committed between such a read and this snapshot was heard by nobody.
 */
async function snapshot(): Promise<StreamMessage[]> {
  const db = instrumentDb();
  const id = lastPublishedId();
  const [timeline, leases, settings, audit] = await Promise.all([
    readTimeline(db, { sinceMs: snapshotSinceMs }),
    sql<{ lease: unknown }>`SELECT lab_lease_json(u) AS lease FROM users u ORDER BY u.id`.execute(db),
    labSettings(db),
    auditConsistency(db),
  ]);
  return [
    { id, event: "settings", data: settings },
    { id, event: "pool", data: { instance: instanceId, ...poolStats() } },
    ...leases.rows.map((row) => ({ id, event: "lease", data: row.lease })),
    ...timeline.operations.map((lane) => ({ id, event: "operation", data: lane })),
    // This instance's lanes still running: a lease's row is written only at its answer.
    ...liveLanes().map(({ lane }) => ({ id, event: "operation", data: structuredClone(lane) })),
    { id, event: "audit", data: audit },
    { id, event: "resync", data: {} },
  ];
}

/**
 * The messages after `lastEventId`, when this process still has all of them and they are a complete account
 * (the database notified all along); null: a snapshot is needed.
 */
function missedSince(lastEventId: string | null): StreamMessage[] | null {
  const [boot, number] = (lastEventId ?? "").split("-");
  if (boot !== hub.boot || !/^\d+$/.test(number ?? "")) return null;
  const after = Number(number);
  const oldest = hub.kept[0] ? Number(hub.kept[0].id.split("-")[1]) : hub.counter + 1;
  if (after > hub.counter || after < oldest - 1 || after <= hub.completeAfter) return null;
  return hub.kept.filter((message) => Number(message.id.split("-")[1]) > after);
}

/**
 * Opens the database's notifications, or keeps them open, one write at a time for every client and the schedule.
 * When they may have been off for a moment since this instance last held them, its clients start over.
 */
function holdWatched(): Promise<void> {
  hub.holding ??= holdGateOpen(instrumentDb())
    .then((missed) => {
      if (missed) startOver();
    })
    .finally(() => (hub.holding = null));
  return hub.holding;
}

/**
 * What this instance's clients were told may have missed a change. Each reads again what the page reads by
 * itself (`resync`: events, calls, identities); what was kept, that `resync` included, is no account to catch up
 * from; a stream already caught up ends, so that the browser's reconnection brings a snapshot (its lanes and
 * leases, which the page holds from the stream alone), and one still catching up ends after its catch-up.
 */
function startOver(): void {
  publish("resync", {});
  hub.completeAfter = hub.counter;
  for (const client of hub.clients) if (client.caughtUp()) client.end();
}

const encoder = new TextEncoder();
const heartbeatEveryMs = 15_000;

const frame = (message: StreamMessage): string =>
  `id: ${message.id}\nevent: ${message.event}\ndata: ${JSON.stringify(message.data)}\n\n`;

/**
 * One client's event stream: what it missed (or a snapshot), then `caught-up`, then every message as it comes,
 * and a comment now and then so that proxies keep the connection open. Ends when the client goes away.
 */
export function openLabStream(lastEventId: string | null, signal: AbortSignal): ReadableStream<Uint8Array> {
  let close = () => {};
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true;
      const send = (text: string) => {
        if (open) controller.enqueue(encoder.encode(text));
      };
      // Live messages wait until what came before them has been sent.
      let backlog: StreamMessage[] | null = [];
      const client: Client = {
        hear: (message) => (backlog ? backlog.push(message) : send(frame(message))),
        caughtUp: () => backlog === null,
        end: () => close(),
      };
      const heartbeat = setInterval(() => send(": still here\n\n"), heartbeatEveryMs);
      close = () => {
        if (!open) return;
        open = false;
        clearInterval(heartbeat);
        leave(client);
        try {
          controller.close();
        } catch {
          // Already cancelled by the client's going away.
        }
      };
      signal.addEventListener("abort", close);

      send("retry: 1000\n\n");
      // The client hears from now on; then, once this instance listens, the database notifies, and only then is
      // its catch-up read: a change committed before is in it, one after is heard. A moment without
      // notifications found on the way reaches this client too, after its catch-up, as a `resync`.
      join(client);
      const catchUp = startHub()
        .then(holdWatched)
        .then(async () => {
          // The other instances tell it their running lanes once it listens (unless it has gone already).
          if (hub.clients.has(client)) clientJoined();
          // It moves only at a start-over while this client is there (never by what comes with no client).
          const completeAfter = hub.completeAfter;
          const missed = missedSince(lastEventId);
          return { messages: missed ?? (await snapshot()), fromSnapshot: missed === null, completeAfter };
        });
      catchUp.then(
        ({ messages, fromSnapshot, completeAfter }) => {
          // A snapshot's own `resync` reaches the page after any waiting here: theirs would have it read twice.
          const live = fromSnapshot ? backlog!.filter((message) => message.event !== "resync") : backlog!;
          for (const message of [...messages, ...live]) send(frame(message));
          backlog = null;
          // Started over while it was read: it ends, and the browser's reconnection reads it again.
          if (hub.completeAfter !== completeAfter) return close();
          // Everything up to now has been sent: the page is live from here, not from the stream's opening (what it
          // missed, or a snapshot and the reads again its `resync` asks for, came first).
          send(frame({ id: lastPublishedId(), event: "caught-up", data: {} }));
          sendPoolIfChanged();
          // The last audit sent may have been computed before the snapshot's (and audits are computed only
          // while someone listens): one computed from now on comes last.
          auditSoon();
        },
        (error: unknown) => {
          console.error("[stream] snapshot failed:", error);
          send(`event: unavailable\ndata: ${JSON.stringify({ detail: "the lab's state could not be read" })}\n\n`);
          close();
        },
      );
    },
    cancel() {
      close();
    },
  });
}

/** A client hears every message from now on; while there are any, the database's notifications stay on. */
function join(client: Client): void {
  hub.clients.add(client);
  hub.gateHold ??= setInterval(holdOnSchedule, holdEveryMs);
  hub.gateHold.unref?.();
}

/**
 * The gate held open while clients watch, one write at a time. One that fails once the gate may have closed
 * starts the clients over: their reconnection is told the lab cannot be read until a write succeeds again.
 */
function holdOnSchedule(): void {
  if (hub.holding) return;
  holdWatched().catch((error: unknown) => {
    console.error("[stream] the lab's notifications could not be kept on:", error);
    if (gateMayHaveClosed()) startOver();
  });
}

function leave(client: Client): void {
  hub.clients.delete(client);
  clientLeft(hub.clients.size);
  if (hub.clients.size > 0 || !hub.gateHold) return;
  clearInterval(hub.gateHold);
  hub.gateHold = null;
}
