/**
 * A simulated call lasts its latency as the caller sees it: from the app's request to its answer. The
 * app stamps when it sent the call; the provider answers at that moment plus the latency, less the
 * usual time an answer takes to travel back. Everything in between (the provider's queue while it is busy,
 * its routing, the settings, the draw, the change, the log write) counts inside the latency rather than on
 * top of it.
 *
 * The app and the provider are two processes on one machine, so the stamp is on the clock both share: the
 * machine's monotonic clock (`process.hrtime`; `performance.now()` counts from each process's own start). The
 * way back cannot be measured by the provider, which never hears when its answer arrives; it takes the way
 * there instead, as the provider's server first sees the call: over loopback both are one write and one
 * read, and the least recent way there leaves out the waits of a busy provider.
 */

/** Request header: when the app sent the call (`machineNow()`). */
export const sentAtHeader = "X-Lab-Sent-At";
/** Request header the provider's server sets: when the call reached it (`machineNow()`). */
export const arrivedAtHeader = "X-Lab-Arrived-At";

/**
 * Request header a caller may send: its deadline for the call, in whole ms after it sent it. The provider
 * does not apply a call past it (its caller has stopped waiting, and said the change is then unwanted).
 * Without it, a call is applied whenever the provider gets to it within its own limit, its caller there or not.
 */
export const deadlineHeader = "X-Deadline-Ms";

/** The moment (machine clock) after which `request` must not be applied, or null when it gave no deadline. */
export function deadlineOf(request: Request, sentAt: number): number | null {
  const header = request.headers.get(deadlineHeader);
  return header !== null && /^\d{1,9}$/.test(header) ? sentAt + Number(header) : null;
}

/** Now on the machine's monotonic clock, in ms: the same in every process of the machine. */
export const machineNow = (): number => Number(process.hrtime.bigint()) / 1e6;

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

/** The header the app's calls to the simulated provider carry: when each attempt was sent. */
export const sentAtStamp = (): Record<string, string> => ({ [sentAtHeader]: String(machineNow()) });

/** In the provider: when calls arrive after they were sent, for the estimate of an answer's way back. */
export class CallTransit {
  private readonly wayThere = new RecentTimes();

  /**
   * When the caller sent `request`: its stamp, or its arrival for a call without one (or with a stamp from a
   * clock ahead of this one).
   */
  sentAt(request: Request): number {
    const arrivedAt = Number(request.headers.get(arrivedAtHeader)) || machineNow();
    const stamp = Number(request.headers.get(sentAtHeader));
    if (!(stamp > 0 && stamp <= arrivedAt)) return arrivedAt;
    this.wayThere.note(arrivedAt - stamp);
    return stamp;
  }

  /** How long an answer takes back to the caller: as long as the quickest recent way there. */
  wayBackMs(): number {
    return this.wayThere.least();
  }
}

/** When one call is answered, and how long the provider waits before doing its work. */
export interface AnswerPlan {
  /** When the answer leaves (machine clock), so that the caller sees it at the latency drawn. */
  answerAt: number;
  /** The wait before the work, which leaves room for the work's usual time. */
  waitMs: number;
  waitEnds: number;
}

/**
 * The sampled latency is the whole call as the caller sees it. The wait before the work leaves room for the
 * work's usual time (a high estimate from its recent times, per endpoint); the answer then waits for whatever
 * is left, so a call answers neither early nor late when the process is busy.
 */
export class AnswerTiming {
  private readonly recentWork = new Map<string, RecentTimes>();

  constructor(private readonly transit: CallTransit) {}

  plan(endpoint: string, sentAt: number, latencyMs: number): AnswerPlan {
    const answerAt = sentAt + latencyMs - this.transit.wayBackMs();
    const waitMs = Math.max(0, answerAt - machineNow() - this.workOf(endpoint).high());
    return { answerAt, waitMs, waitEnds: machineNow() + waitMs };
  }

  /** The work of a call played as planned is done: its time is a sample for the next plans. */
  workDone(endpoint: string, plan: AnswerPlan): void {
    this.workOf(endpoint).note(machineNow() - plan.waitEnds);
  }

  /** The call as its caller will see it: answered at `answerAt` at the earliest, and the answer's way back. */
  durationMs(sentAt: number, plan: AnswerPlan): number {
    return Math.max(machineNow(), plan.answerAt) + this.transit.wayBackMs() - sentAt;
  }

  private workOf(endpoint: string): RecentTimes {
    let times = this.recentWork.get(endpoint);
    if (!times) this.recentWork.set(endpoint, (times = new RecentTimes()));
    return times;
  }
}

/** How late a timer fires here: a wait's timer is set to end early by a high estimate of it. */
const timerLateness = new RecentTimes();

/**
 * Past this, a timer firing early would leave a long stretch to wait turn by turn: on a provider this busy its
 * answers are late anyway.
 */
const mostEarlyMs = 2;

/**
 * Resolves at `moment` on the machine's clock, as close to it as this process allows, and never before it. A
 * timer fires up to a few whole milliseconds late (its clock counts whole ones, and a busy provider's are later),
 * so the wait's timer is set to end early by a high estimate of that (at most `mostEarlyMs`), and the stretch
 * left is waited turn by turn of the event loop (`setImmediate`). Waiting again on a timer made every answer
 * about a millisecond late: a call lasted 1.4–1.7 ms over its latency at p50 as the app's transport saw it
 * (0.5–0.6 ms now), while the call log said it lasted its latency.
 */
export async function delayUntil(moment: number): Promise<void> {
  const waitMs = moment - machineNow() - Math.min(timerLateness.high(), mostEarlyMs);
  if (waitMs > 0) {
    const waitStarted = machineNow();
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    timerLateness.note(machineNow() - waitStarted - waitMs);
  }
  while (machineNow() < moment) await new Promise((resolve) => setImmediate(resolve));
}
