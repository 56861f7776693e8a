/**
 * A simulated call lasts its latency as the caller sees it: from the app's `fetch` to its answer. The
 * app's fetch stamps when it sent the call, the simulator answers at that moment plus the latency, less
 * the usual time an answer takes to travel back through the interception (which the fetch measures).
 * Everything in between (MSW's routing, the settings, the draw, the change, the log write) is the
 * simulator's own processing, and counts inside the latency rather than on top of it.
 */

/** Request header: when the app's fetch sent the call (`performance.now()` of this process). */
export const sentAtHeader = "X-Lab-Sent-At";
/** Response header: when the simulator handed its answer back. */
export const answeredAtHeader = "X-Lab-Answered-At";

/** The last few samples of a time, for a low or a high estimate of its next one. */
export class RecentTimes {
  private readonly times: number[] = [];

  constructor(private readonly keep = 16) {}

  /** A time may be negative: a timer can fire early by under a millisecond (its clock is whole milliseconds). */
  note(ms: number): void {
    if (!Number.isFinite(ms)) return;
    this.times.push(ms);
    if (this.times.length > this.keep) this.times.shift();
  }

  /** The least of the recent times (0 before any). */
  least(): number {
    return this.times.length === 0 ? 0 : Math.min(...this.times);
  }

  /** The second largest (a high estimate that ignores one outlier; 0 before any). */
  high(): number {
    if (this.times.length === 0) return 0;
    const sorted = [...this.times].sort((a, b) => b - a);
    return sorted[Math.min(1, sorted.length - 1)]!;
  }
}

/**
 * How long an answer takes from the handler back to the app's fetch: the least recent time, never early.
 * One per process: Next.js evaluates this module once per bundle, and the fetch that notes it (a route's)
 * and the simulator that reads it (instrumentation's) are in different ones.
 */
const holder = globalThis as typeof globalThis & { __leaseLockLabDelivery?: RecentTimes };
const delivery = (holder.__leaseLockLabDelivery ??= new RecentTimes());

export const deliveryMs = (): number => delivery.least();

/** The app's fetch heard an answer: how long it took to arrive after the simulator handed it back. */
export function noteDelivery(response: Response): void {
  const answeredAt = Number(response.headers.get(answeredAtHeader));
  if (answeredAt > 0) delivery.note(performance.now() - answeredAt);
}

/** When the caller sent `request` (its stamp, or `fallback` for a call from elsewhere). */
export function sentAtOf(request: Request, fallback: number): number {
  const sentAt = Number(request.headers.get(sentAtHeader));
  return sentAt > 0 && sentAt <= performance.now() ? sentAt : fallback;
}
