/**
 * PostgreSQL LISTEN/NOTIFY between app instances. Each process listens on one dedicated connection (not
 * from the pool, which the lab exhausts on purpose), shared by every subscriber and opened again after an
 * error; a subscriber's `onConnect` runs after every (re)connection, to catch up on what it missed, and its
 * `onDisconnect` when the connection is lost.
 */
import { sql, type Kysely } from "kysely";
import pg from "pg";
import { databaseTimeouts } from "../../db/connection";
import { config } from "./config";
import { processSingleton } from "./process-singleton";

export interface Subscriber {
  onMessage(payload: string): void;
  onConnect?(): void;
  /** The connection was lost: what is sent from now until the next `onConnect` is not heard. */
  onDisconnect?(): void;
}

interface Listener {
  subscribers: Map<string, Set<Subscriber>>;
  client: pg.Client | null;
  connecting: boolean;
  retryDelayMs: number;
  /** The last query sent on the connection: the next waits for it (see send). */
  lastSent: Promise<unknown>;
}

const listener = processSingleton<Listener>("Listener", () => ({
  subscribers: new Map(),
  client: null,
  connecting: false,
  retryDelayMs: 0,
  lastSent: Promise.resolve(),
}));

const firstRetryDelayMs = 500;
// A failover takes seconds: the listener comes back within 2 s of the new primary (not the 8 s of a longer backoff).
const maxRetryDelayMs = 2_000;
const channelPattern = /^[a-z_][a-z0-9_]{0,62}$/;

/** Calls `subscriber` for every notification on `channel`, from any app instance; returns the unsubscribe. */
export function subscribe(channel: string, subscriber: Subscriber): () => void {
  if (!channelPattern.test(channel)) throw new Error(`not a channel name: ${channel}`);
  const subscribers = listener.subscribers.get(channel) ?? new Set();
  listener.subscribers.set(channel, subscribers.add(subscriber));
  // A LISTEN that fails with its connection is issued again, for every channel, when it reconnects. A
  // subscriber joining a connection that is up catches up once its LISTEN is in place, as at a connection;
  // one joining while it is being opened is taken in by the opening (connect).
  if (listener.client && !listener.connecting)
    listen(listener.client, channel).then(
      () => run(() => subscriber.onConnect?.()),
      () => {},
    );
  else void connect();
  return () => {
    subscribers.delete(subscriber);
    if (subscribers.size > 0) return;
    listener.subscribers.delete(channel);
    if (listener.client) send(listener.client, `UNLISTEN ${pg.escapeIdentifier(channel)}`).catch(() => {});
  };
}

/** Sends `payload` (under 8,000 bytes) to every instance's subscribers of `channel`, at commit. */
export const notify = <DB>(db: Kysely<DB>, channel: string, payload: string): Promise<void> =>
  notifyAll(db, channel, [payload]);

/** Sends each of `payloads` (each under 8,000 bytes), in order, in one statement: one round trip for them all. */
export async function notifyAll<DB>(db: Kysely<DB>, channel: string, payloads: string[]): Promise<void> {
  if (payloads.length === 0) return;
  await sql`SELECT pg_notify(${channel}, payload) FROM unnest(${payloads}::text[]) WITH ORDINALITY AS sent (payload, n)
             ORDER BY n`.execute(db);
}

async function connect(): Promise<void> {
  if (listener.connecting || listener.client) return;
  listener.connecting = true;
  // Straight to PostgreSQL, never through a transaction pooler: a LISTEN belongs to a session, and the
  // pooler would hand the server connection that ran it to other clients and deliver nothing here.
  const client = new pg.Client({
    connectionString: config.directDatabaseUrl,
    connectionTimeoutMillis: databaseTimeouts.connectMs,
    keepAlive: true,
  });
  client.on("notification", ({ channel, payload }) => {
    for (const subscriber of listener.subscribers.get(channel) ?? []) run(() => subscriber.onMessage(payload ?? ""));
  });
  let dropped = false;
  const drop = (error: unknown) => {
    if (dropped) return;
    dropped = true;
    lost(client, error);
  };
  client.on("error", drop);
  client.on("end", () => drop(new Error("connection ended")));
  try {
    await client.connect();
    listener.client = client;
    // Every channel, those subscribed while the first LISTENs ran included, before anyone catches up.
    const listening = new Set<string>();
    for (let pending = [...listener.subscribers.keys()]; pending.length > 0;) {
      await Promise.all(pending.map((channel) => listen(client, channel).then(() => listening.add(channel))));
      pending = [...listener.subscribers.keys()].filter((channel) => !listening.has(channel));
    }
    listener.retryDelayMs = 0;
    for (const subscribers of listener.subscribers.values()) {
      for (const subscriber of subscribers) run(() => subscriber.onConnect?.());
    }
  } catch (error) {
    drop(error);
  } finally {
    listener.connecting = false;
  }
}

function listen(client: pg.Client, channel: string): Promise<void> {
  return send(client, `LISTEN ${pg.escapeIdentifier(channel)}`);
}

/**
 * Sends `statement` once every query sent before it has answered: subscribers come and go at any moment, and
 * pg deprecates a query sent on a client while another runs (pg 9 will refuse it).
 */
function send(client: pg.Client, statement: string): Promise<void> {
  const sent = listener.lastSent.then(() => client.query(statement)).then(() => {});
  listener.lastSent = sent.catch(() => {});
  return sent;
}

/** The connection failed or dropped: close it and try again, backing off while the database stays away. */
function lost(client: pg.Client, error: unknown): void {
  if (listener.client && listener.client !== client) return;
  listener.client = null;
  for (const subscribers of listener.subscribers.values()) {
    for (const subscriber of subscribers) run(() => subscriber.onDisconnect?.());
  }
  client.end().catch(() => {});
  listener.retryDelayMs = Math.min(maxRetryDelayMs, Math.max(firstRetryDelayMs, listener.retryDelayMs * 2));
  console.error(`[notifications] listening connection lost (${String(error)}); again in ${listener.retryDelayMs} ms`);
  setTimeout(() => void connect(), listener.retryDelayMs).unref();
}

function run(callback: () => void): void {
  try {
    callback();
  } catch (error) {
    console.error("[notifications] a subscriber failed:", error);
  }
}
