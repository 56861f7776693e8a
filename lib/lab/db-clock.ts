/**
 * The database's clock, as seen from this process: lanes are stamped with it, so lanes written by two
 * instances line up. The offset to `clock_timestamp()` is measured once, then every minute; until then
 * (or without a database) it is taken as 0. Each measurement is the best of a few round trips: one alone,
 * on a busy machine, can take a hundred milliseconds and put every stamp that far off for a minute (a lane
 * then showed a refusal after the expiry of the lease that refused it). The error is at most half the
 * quickest round trip.
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../../db/schema";

let clockOffsetMs = 0;
let clockMeasured: Promise<void> | undefined;

/** The database's time now, from this process's clock and its measured offset. */
export const dbNow = (): string => new Date(Date.now() + clockOffsetMs).toISOString();

/** Round trips per measurement: the quickest is kept. */
const samplesPerMeasurement = 5;

async function measureClock(db: Kysely<Database>): Promise<void> {
  let best: { roundTripMs: number; offsetMs: number } | null = null;
  for (let sample = 0; sample < samplesPerMeasurement; sample++) {
    const before = performance.now();
    const { rows } = await sql<{ now: Date }>`SELECT clock_timestamp() AS now`.execute(db);
    const after = performance.now();
    // The wall clock at the round trip's middle, from the monotonic one (a wall clock may step meanwhile).
    const middle = Date.now() - (after - before) / 2;
    const offsetMs = rows[0]!.now.getTime() - middle;
    if (!best || after - before < best.roundTripMs) best = { roundTripMs: after - before, offsetMs };
  }
  clockOffsetMs = best!.offsetMs;
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
