import type { Request, Route } from "@playwright/test";

/**
 * When the held requests go out once every actor's is in: all at once, one after another in actor order or
 * in reverse, or actor i `staggerMs[i]` milliseconds after the barrier opens.
 */
export type Release = "together" | "in-order" | "reversed" | { staggerMs: number[] };

export interface HeldRequest {
  actor: number;
  route: Route;
  request: Request;
  /** performance.now() when the route caught it. */
  heldAt: number;
  /** performance.now() when it was let go (by the kit's own sending: when its last byte was written); unset while held. */
  releasedAt?: number;
  /** Sent by the kit itself: settles once the page has its answer. */
  delivered?: Promise<void>;
  /** Sent by the kit itself and failed: why (the page's request fails too). */
  sendFailure?: string;
}

/**
 * Holds the first matching request of each of N actors in its route until all N are held. Without it,
 * the first actor's request may be answered before the second is even sent, and a test of a race passes
 * without any race having happened.
 */
export class Barrier {
  private readonly held = new Map<number, HeldRequest>();
  /** Matching requests an actor sent after its held one: they went out unheld. */
  readonly extra = new Map<number, number>();
  private opened = false;
  private full: () => void = () => {};
  private readonly filled = new Promise<void>((resolve) => (this.full = resolve));

  constructor(private readonly actors: number) {}

  /** Called by actor `actor`'s route for a matching request: holds it, or says it must go on unheld. */
  hold(actor: number, route: Route, request: Request): boolean {
    if (this.opened || this.held.has(actor)) {
      this.extra.set(actor, (this.extra.get(actor) ?? 0) + 1);
      return false;
    }
    this.held.set(actor, { actor, route, request, heldAt: performance.now() });
    if (this.held.size === this.actors) this.full();
    return true;
  }

  /** Resolves once every actor's request is held; rejects after `timeoutMs`. */
  async whenFull(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`not every actor sent a matching request within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([this.filled, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the barrier: later matching requests go out unheld. Answers the held ones, in actor order. */
  open(): HeldRequest[] {
    this.opened = true;
    return this.heldRequests();
  }

  /** Lets every held request go in the given order; answers the actors in the order they were let go. */
  async release(order: Release): Promise<number[]> {
    const actors = this.open().map((held) => held.actor);
    const sent: number[] = [];
    const letGo = async (actor: number) => {
      const held = this.held.get(actor)!;
      held.releasedAt = performance.now();
      sent.push(actor);
      // continue(), not fallback(): it resolves once the browser has been told to send the request.
      await held.route.continue();
    };
    if (order === "together") await Promise.all(actors.map(letGo));
    else if (order === "in-order") for (const actor of actors) await letGo(actor);
    else if (order === "reversed") for (const actor of actors.reverse()) await letGo(actor);
    else {
      const start = performance.now();
      await Promise.all(
        actors.map(async (actor) => {
          const wait = start + order.staggerMs[actor]! - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          await letGo(actor);
        }),
      );
    }
    return sent;
  }

  /** Fails every request still held (after a timeout or a failed act), so that no page waits forever. */
  async abortHeld(): Promise<void> {
    this.opened = true;
    await Promise.all(
      [...this.held.values()]
        .filter((held) => held.releasedAt === undefined)
        .map((held) => held.route.abort("aborted").catch(() => {})),
    );
  }

  heldRequests(): HeldRequest[] {
    return [...this.held.values()].sort((a, b) => a.actor - b.actor);
  }
}
