/**
 * The database's clock, as seen from this process: lanes are stamped with it, so lanes written by two
 * instances line up. The offset to `clock_timestamp()` is measured once, then every minute; until then
 * (or without a database) it is taken as 0.
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../../db/schema";

let clockOffsetMs = 0;
let clockMeasured: Promise<void> | undefined;

/** The database's time now, from this process's clock and its measured offset. */
export const dbNow = (): string => new Date(Date.now() + clockOffsetMs).toISOString();

async function measureClock(db: Kysely<Database>): Promise<void> {
  const before = Date.now();
  const { rows } = await sql<{ now: Date }>`SELECT clock_timestamp() AS now`.execute(db);
  const after = Date.now();
  clockOffsetMs = rows[0]!.now.getTime() - (before + after) / 2;
}

/** Resolves once the offset has been measured (or could not be: then it stays 0, and says so). */
export function databaseClock(db: Kysely<Database>): Promise<void> {
  clockMeasured ??= measureClock(db)
    .then(() => void setInterval(() => void measureClock(db).catch(() => undefined), 60_000).unref())
    .catch((error: unknown) => console.error("[timeline] could not read the database's clock:", error));
  return clockMeasured;
}

/** A time of day to the millisecond, for the words of a phase's detail. */
export const clockTime = (iso: string): string => iso.slice(11, 23);
