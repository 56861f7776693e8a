/**
 * A deadline on the monotonic clock (performance.now), as an AbortSignal that every call made under it
 * carries. It can be moved later (after an owner-checked lease renewal) until it has fired or been
 * disposed; why it fired is a typed cause, so a caller tells a lost lease from a timeout without
 * matching words.
 */

/**
 * Why a deadline fired: its time ran out, or the lease it sat inside was found lost, or its time ran out
 * while the lease was being renewed (a renewal failed, or had not answered: the database away or stalled,
 * as in a failover).
 */
export type DeadlineCause = "timeout" | "lease-lost" | "unrenewed";

const messages: Record<DeadlineCause, string> = {
  timeout: "deadline reached",
  "lease-lost": "the lease was lost",
  unrenewed: "deadline reached: the lease could not be renewed in time",
};

export class Deadline {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private at = 0;
  private cause: DeadlineCause | null = null;
  private disposed = false;
  /** Since a renewal was started and none has succeeded: whether one failed, and how long one may take. */
  private renewal: { since: number; stalledAfterMs: number; failed: boolean } | null = null;

  constructor(budgetMs: number) {
    this.extend(budgetMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why it fired, or null while it has not. */
  get firedBecause(): DeadlineCause | null {
    return this.cause;
  }

  remainingMs(): number {
    return this.cause ? 0 : Math.max(0, this.at - performance.now());
  }

  /** Moves the deadline to `budgetMs` from now; one that fired or was disposed stays as it is. */
  extend(budgetMs: number): void {
    if (this.cause || this.disposed) return;
    clearTimeout(this.timer);
    this.renewal = null;
    this.at = performance.now() + Math.max(0, budgetMs);
    this.timer = setTimeout(
      () => this.fire(this.unrenewed() ? "unrenewed" : "timeout"),
      Math.max(0, Math.floor(budgetMs)),
    );
    this.timer.unref?.();
  }

  /**
   * A renewal is under way. If the time runs out before one succeeds (and moves it), and one failed or has
   * taken `stalledAfterMs` or more (a healthy database answers in milliseconds), that is why.
   */
  renewalStarted(stalledAfterMs: number): void {
    this.renewal = { since: performance.now(), stalledAfterMs, failed: this.renewal?.failed ?? false };
  }

  renewalFailed(): void {
    if (this.renewal) this.renewal.failed = true;
  }

  private unrenewed(): boolean {
    const renewal = this.renewal;
    return renewal !== null && (renewal.failed || performance.now() - renewal.since >= renewal.stalledAfterMs);
  }

  /** Fires now: the lease turned out to be lost. */
  abort(cause: "lease-lost"): void {
    this.fire(cause);
  }

  /** The work is over: no timer stays behind, and nothing moves it again. */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
  }

  private fire(cause: DeadlineCause): void {
    if (this.cause) return;
    clearTimeout(this.timer);
    this.cause = cause;
    const name = cause === "lease-lost" ? "AbortError" : "TimeoutError";
    this.controller.abort(new DOMException(messages[cause], name));
  }
}

/** Waits `ms`, or rejects as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
