/**
 * For a provider whose state is on a database of its own: every call it logs is announced on that database
 * (the trigger on `idp.calls`, channel `lab_stream`), and the lab's stream listens on the lab's. This relays
 * those announcements from one to the other, on connections of its own. One sent while the lab's database is
 * unreachable (a promotion) is lost, like any announcement then: the stream tells its clients to read again
 * when its own listening connection comes back. The trigger announces only while that database's gate is open
 * (migration 0019), and no instance of the lab opens it there: the relay holds it open from its LISTEN on (each
 * time it listens again) until it stops.
 */
import pg from "pg";
import { databaseTimeouts } from "../../db/connection";
import { labStreamChannel } from "./stream";
import { relayedGate } from "./watch-gate";

export async function relayProviderCalls(stateUrl: string, labUrl: string): Promise<{ stop(): Promise<void> }> {
  const lab = new pg.Pool({ connectionString: labUrl, max: 2, connectionTimeoutMillis: databaseTimeouts.connectMs });
  lab.on("error", () => undefined);
  let listener: pg.Client | null = null;
  let stopping = false;
  const listen = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: stateUrl, keepAlive: true });
    client.on("notification", ({ payload }) => {
      if (payload) lab.query("SELECT pg_notify($1, $2)", [labStreamChannel, payload]).catch(() => undefined);
    });
    const again = () => {
      if (stopping || listener !== client) return;
      listener = null;
      setTimeout(() => void listen().catch(() => undefined), 1_000).unref();
    };
    client.on("error", again);
    client.on("end", again);
    listener = client;
    await client.connect();
    await client.query(`LISTEN ${pg.escapeIdentifier(labStreamChannel)}`);
    await relayedGate.open(client);
  };
  await listen();
  return {
    async stop() {
      stopping = true;
      if (listener) await relayedGate.close(listener).catch(() => undefined);
      await listener?.end().catch(() => undefined);
      await lab.end();
    },
  };
}
