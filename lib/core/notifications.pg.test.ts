import { afterAll, expect, inject, it } from "vitest";
import { createDb } from "../../db/connection";

// The listening connection is this file's database: config reads DATABASE_URL when it is first imported.
process.env.DATABASE_URL = inject("databaseUrl");
const { notify, subscribe } = await import("./notifications");
const { db } = createDb(inject("databaseUrl"), 1);
afterAll(() => db.destroy());

const warnings: Error[] = [];
process.on("warning", (warning) => warnings.push(warning));

/** Subscribes to `channel`; resolves once it listens, with the first message it hears. */
function listenTo(channel: string): { listening: Promise<void>; heard: Promise<string>; stop: () => void } {
  let onListening!: () => void;
  let onHeard!: (payload: string) => void;
  const listening = new Promise<void>((resolve) => (onListening = resolve));
  const heard = new Promise<string>((resolve) => (onHeard = resolve));
  const stop = subscribe(channel, { onConnect: onListening, onMessage: onHeard });
  return { listening, heard, stop };
}

it("subscribers joining at once, while the connection opens and once it is up, each hear their channel, one query at a time", async () => {
  // Three while the connection opens, then two at once on the live connection.
  const opening = ["channel_a", "channel_b", "channel_c"].map(listenTo);
  await Promise.all(opening.map((each) => each.listening));
  const joining = ["channel_d", "channel_e"].map(listenTo);
  await Promise.all(joining.map((each) => each.listening));

  const all = [...opening, ...joining];
  await Promise.all(["a", "b", "c", "d", "e"].map((letter) => notify(db, `channel_${letter}`, `to ${letter}`)));
  expect(await Promise.all(all.map((each) => each.heard))).toEqual(["to a", "to b", "to c", "to d", "to e"]);
  for (const each of all) each.stop();

  // pg warns when a query is sent on a client while another runs (pg 9 will refuse it).
  await notify(db, "channel_a", "after the UNLISTENs"); // its round trip lets the UNLISTENs' answers arrive
  expect(warnings.map((warning) => `${warning.name}: ${warning.message}`)).toEqual([]);
});
