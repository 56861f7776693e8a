/**
 * The lab's instruments (the timeline's recording, the event stream's reads) use a small pool of their
 * own: the lesson of `transaction` and `advisory` is an exhausted app pool, and the instruments must keep
 * showing it rather than queue behind it.
 */
import type { Kysely } from "kysely";
import { createDb } from "../../db/connection";
import type { Database } from "../../db/schema";
import { config } from "../core/config";

const holder = globalThis as typeof globalThis & { __leaseLockLabInstrumentDb?: Kysely<Database> };

export function instrumentDb(): Kysely<Database> {
  holder.__leaseLockLabInstrumentDb ??= createDb(config.databaseUrl, 3).db;
  return holder.__leaseLockLabInstrumentDb;
}
