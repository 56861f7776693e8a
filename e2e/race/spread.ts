import type { Request } from "@playwright/test";
import type { Send } from "./flight.js";

/** How close together the race's requests went out and arrived, in ms. */
export interface Spread {
  /**
   * From the first request sent to the last. `browser`: the browser's own account of when it began sending each
   * (`request.timing()`), null if it gave none; `last-byte`: from the first last byte written to the last;
   * `single-packet`: the time it took to queue every final frame, which then go out in one write.
   */
  sendMs: number | null;
  /**
   * The kit's own sending: how many requests the server had acknowledged before their final bytes went
   * (`last-byte`: a 100 Continue on the connection; `single-packet`: every stream, by a PING's acknowledgement).
   * Null when the browser sent them.
   */
  acknowledged: number | null;
  /** From the first arrival the server reported to the last (`arrivals`); null when it reported none. */
  arrivalMs: number | null;
  /** How many arrival times the server reported. */
  arrivals: number;
}

/** A time the server reports: epoch milliseconds (fractions welcome), an ISO string, or a Date. */
export type ArrivalTime = number | string | Date;

const epochMs = (time: ArrivalTime) => (typeof time === "number" ? time : new Date(time).getTime());

/** Last minus first; null for fewer than two or any time that is not one. */
export function spreadOf(times: readonly number[]): number | null {
  if (times.length < 2 || times.some((time) => !Number.isFinite(time))) return null;
  return Math.max(...times) - Math.min(...times);
}

/** When the browser says it began sending each request: its clock, epoch ms (NaN where it says nothing). */
export function browserSendTimes(requests: Request[]): number[] {
  return requests.map((request) => {
    const { startTime, requestStart } = request.timing();
    return requestStart >= 0 ? startTime + requestStart : Number.NaN;
  });
}

export const arrivalSpread = (reported: readonly ArrivalTime[]) => ({
  arrivalMs: spreadOf(reported.map(epochMs)),
  arrivals: reported.length,
});

/** The spread in words, for the race's story. */
export function describeSpread(send: Send, spread: Spread, actors: number): string {
  const sent = {
    browser: `sent by the browser: it began sending them within ${duration(spread.sendMs)} (its own timing)`,
    "last-byte":
      `sent last-byte over ${actors} HTTP/1.1 connections, ${spread.acknowledged} of whose heads the server ` +
      `acknowledged with 100 Continue first: every last byte written within ${duration(spread.sendMs)}`,
    "single-packet":
      "sent single-packet over one HTTP/2 connection, once the server acknowledged a PING: every final frame " +
      `queued within ${duration(spread.sendMs)}, then written together`,
  }[send];
  const arrived =
    spread.arrivals === 0
      ? "arrival spread not reported (the race's `arrivals` option reads it from the server)"
      : `the server saw them arrive within ${duration(spread.arrivalMs)} (${spread.arrivals} arrival times reported` +
        `${spread.arrivals === actors ? "" : ` for ${actors} requests`})`;
  return `${sent}; ${arrived}`;
}

function duration(ms: number | null): string {
  if (ms === null) return "an unknown time";
  return ms < 1 ? `${Math.round(ms * 1000)} µs` : `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
}
