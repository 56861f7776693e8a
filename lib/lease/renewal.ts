/**
 * The heartbeat that renews a lease while its work runs: one timer, armed again only after the renewal
 * it started has answered, so renewals never overlap on a slow database. Stopping waits for the one in
 * flight, so nothing it does (an event, a moved deadline) can come after the release.
 */
export class Renewal {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly everyMs: number,
    /** One renewal; a rejection is a failed attempt (a database blip), and the next one is tried on time. */
    private readonly renewOnce: () => Promise<void>,
  ) {
    this.arm();
  }

  /** No renewal starts after this; resolves once the one in flight, if any, has answered. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight;
  }

  private arm(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.inFlight = this.renewOnce()
        .catch(() => undefined)
        .finally(() => {
          this.inFlight = null;
          this.arm();
        });
    }, this.everyMs);
    this.timer.unref?.();
  }
}
