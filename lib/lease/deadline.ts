/**
 * A deadline on the monotonic clock (performance.now), as an AbortSignal that every call made under it
 * carries. It can be moved later (after an owner-checked lease renewal) until it has fired.
 */
export class Deadline {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private at = 0;

  constructor(budgetMs: number) {
    this.extend(budgetMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why it fired ("deadline reached", "lease lost", …), or null while it has not. */
  get firedBecause(): string | null {
    return this.signal.aborted ? String((this.signal.reason as Error | undefined)?.message ?? "aborted") : null;
  }

  remainingMs(): number {
    return Math.max(0, this.at - performance.now());
  }

  /** Moves the deadline to `budgetMs` from now; a deadline that already fired stays fired. */
  extend(budgetMs: number): void {
    if (this.signal.aborted) return;
    clearTimeout(this.timer);
    this.at = performance.now() + Math.max(0, budgetMs);
    this.timer = setTimeout(
      () => this.controller.abort(new DOMException("deadline reached", "TimeoutError")),
      Math.max(0, Math.floor(budgetMs)),
    );
    this.timer.unref?.();
  }

  /** Fires now, e.g. when the lease turns out to be lost. */
  abort(reason: string): void {
    clearTimeout(this.timer);
    this.controller.abort(new DOMException(reason, "AbortError"));
  }

  dispose(): void {
    clearTimeout(this.timer);
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
