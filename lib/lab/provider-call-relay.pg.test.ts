import pg from "pg";
import { afterAll, expect, inject, it } from "vitest";
import { prepareDatabase } from "../../db/prepare";
import { databaseForFile } from "../../test/harness/databases";
import { relayProviderCalls } from "./provider-call-relay";

const labUrl = inject("databaseUrl");
// The provider's own database, as under `--replica` and `--ha`: nobody of the lab opens its gate.
const stateUrl = await prepareDatabase(databaseForFile(import.meta.filename, "provider-state"), { fresh: true });
const clients: pg.Client[] = [];
afterAll(async () => {
  for (const client of clients) await client.end();
});

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  return client;
}

const gateOpen = async (state: pg.Client) =>
  (await state.query<{ open: boolean }>("SELECT until > clock_timestamp() AS open FROM lab_watch")).rows[0]!.open;

it("relays every call logged on the provider's own database to the lab's, holding that database's gate open until it stops", async () => {
  const state = await connect(stateUrl);
  const lab = await connect(labUrl);
  const heard: { method: string; path: string }[] = [];
  lab.on("notification", ({ payload }) => {
    const message = JSON.parse(payload ?? "{}") as { kind: string; data: { method: string; path: string } };
    if (message.kind === "provider-call") heard.push(message.data);
  });
  await lab.query("LISTEN lab_stream");
  expect(await gateOpen(state)).toBe(false);

  const relay = await relayProviderCalls(stateUrl, labUrl);
  expect(await gateOpen(state)).toBe(true);
  await state.query("INSERT INTO idp.calls (method, path, status, duration_ms) VALUES ('DELETE', '/relayed', 200, 1)");
  await expect.poll(() => heard).toEqual([expect.objectContaining({ method: "DELETE", path: "/relayed" })]);

  await relay.stop();
  expect(await gateOpen(state)).toBe(false);
});
