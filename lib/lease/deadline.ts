/**
 * A deadline on the monotonic clock (performance.now), as an AbortSignal that every call made under it
 * carries. It can be moved later (after an owner-checked lease renewal) until it has fired or been
 * disposed; why it fired is a typed cause, so a caller tells a lost lease from a timeout without
 * matching words.
 */

/**
 * Why a deadline fired: its time ran out, or the lease it sat inside was found lost, or its time ran out
 * because the lease could not be renewed (its last renewal failed: the database away, as in a failover).
 */
export type DeadlineCause = "timeout" | "lease-lost" | "unrenewed";

const messages: Record<DeadlineCause, string> = {
  timeout: "deadline reached",
  "lease-lost": "the lease was lost",
  unrenewed: "deadline reached: the lease could not be renewed",
};

export class Deadline {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private at = 0;
  private cause: DeadlineCause | null = null;
  private disposed = false;
  /** The last renewal failed, and none has succeeded since. */
  private renewalFailing = false;

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
    this.renewalFailing = false;
    this.at = performance.now() + Math.max(0, budgetMs);
    this.timer = setTimeout(
      () => this.fire(this.renewalFailing ? "unrenewed" : "timeout"),
      Math.max(0, Math.floor(budgetMs)),
    );
    this.timer.unref?.();
  }

  /** A renewal failed (it could not be sent or answered): if the time runs out before the next one succeeds, that is why. */
  renewalFailed(): void {
    this.renewalFailing = true;
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
