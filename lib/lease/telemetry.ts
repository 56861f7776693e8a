/**
 * The lease in OpenTelemetry, as a layer around a way of running work under it (`withLease`, or anything of
 * its shape): spans for each phase (acquire, renew, checkpoint, release) with the table, the row, the fence and
 * the outcome, and metrics for contention (acquisitions by outcome, how long acquiring took, how long leases
 * were held, renewals, losses). It uses only `@opentelemetry/api`: without an SDK registered every span and
 * instrument is a no-op. It sends no statement of its own. Names, attributes and units: README.md.
 *
 * @example
 * const run = observedLease(withLease); // then run(lock, id, options, work) as withLease
 */
import {
  metrics,
  SpanStatusCode,
  trace,
  type Attributes,
  type Meter,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import type { LeaseHandle, LeaseLock } from "./lease-lock.ts";
import { LeaseLostError, type LeaseSection, type RunUnderLease } from "./with-lease.ts";

export const instrumentationName = "@lease-lock-lab/lease";

export interface LeaseTelemetryOptions {
  /** Default: the global tracer provider's tracer `@lease-lock-lab/lease`. */
  tracer?: Tracer;
  /** Default: the global meter provider's meter `@lease-lock-lab/lease`. */
  meter?: Meter;
}

/** The instruments, created once per layer. Durations in seconds, as OpenTelemetry's conventions use. */
function instrumentsOf(meter: Meter) {
  return {
    acquisitions: meter.createCounter("lease.acquisitions", {
      description: "Acquisitions tried, by outcome (won, refused, unmet, not-found, failed)",
      unit: "{acquisition}",
    }),
    acquireDuration: meter.createHistogram("lease.acquire.duration", {
      description: "How long acquiring took: the one statement, queueing on a concurrent acquirer's row lock included",
      unit: "s",
    }),
    heldDuration: meter.createHistogram("lease.held.duration", {
      description: "How long a lease was held: from its acquisition to the end of its release (or its loss)",
      unit: "s",
    }),
    renewals: meter.createCounter("lease.renewals", {
      description: "Renewals, by outcome (renewed, lost, failed)",
      unit: "{renewal}",
    }),
    losses: meter.createCounter("lease.losses", {
      description: "Leases found no longer the holder's, at a renewal or a checkpoint",
      unit: "{loss}",
    }),
  };
}
type Instruments = ReturnType<typeof instrumentsOf>;

/** One run's lease: since when it was held, and where it was found lost. */
interface Held {
  since: number | null;
  lostAt: string | null;
}

interface Observer {
  tracer: Tracer;
  instruments: Instruments;
}

/** `run` with the lease's spans and metrics around it; it behaves exactly as `run` does. */
export function observedLease(run: RunUnderLease, options: LeaseTelemetryOptions = {}): RunUnderLease {
  const observer = {
    tracer: options.tracer ?? trace.getTracer(instrumentationName),
    instruments: instrumentsOf(options.meter ?? metrics.getMeter(instrumentationName)),
  };
  return async (lock, rowId, runOptions, work) => {
    const base = { "lease.table": lock.table, "lease.row_id": String(rowId) };
    const held: Held = { since: null, lostAt: null };
    try {
      return await run(observedLock(lock, observer, held), rowId, runOptions, (section) =>
        work(observedSection(section, observer, base, held)),
      );
    } finally {
      if (held.since !== null) observer.instruments.heldDuration.record(seconds(performance.now() - held.since), base);
      // One loss per lease, however many calls found it: where it was found, a checkpoint's step over a renewal.
      if (held.lostAt !== null) observer.instruments.losses.add(1, { ...base, "lease.step": held.lostAt });
    }
  };
}

const seconds = (ms: number) => ms / 1_000;

/** Runs `body` in a span named `name`; `outcome` names how it went, and a throw is the span's error. */
async function inSpan<T>(
  { tracer }: Observer,
  name: string,
  attributes: Attributes,
  body: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await body(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      span.setAttribute("lease.outcome", "failed");
      throw error;
    } finally {
      span.end();
    }
  });
}

const outcomeOf = (acquisition: { acquired: true } | { acquired: false; reason: string }): string =>
  acquisition.acquired ? "won" : acquisition.reason === "held" ? "refused" : acquisition.reason;

function observedLock<DB, TB extends keyof DB & string>(
  lock: LeaseLock<DB, TB>,
  observer: Observer,
  held: Held,
): LeaseLock<DB, TB> {
  return {
    ...lock,
    acquire: (db, rowId, options) => {
      const base = { "lease.table": lock.table, "lease.row_id": String(rowId) };
      const startedAt = performance.now();
      const { acquisitions, acquireDuration } = observer.instruments;
      return inSpan(observer, "lease.acquire", { ...base, "lease.ttl_ms": options.ttlMs }, async (span) => {
        let outcome = "failed";
        try {
          const acquisition = await lock.acquire(db, rowId, options);
          outcome = outcomeOf(acquisition);
          span.setAttribute("lease.outcome", outcome);
          if (!acquisition.acquired) {
            if (acquisition.reason === "held" && acquisition.heldUntil)
              span.setAttribute("lease.held_until", acquisition.heldUntil.toISOString());
            return acquisition;
          }
          held.since = performance.now();
          span.setAttributes(leaseAttributes(acquisition.lease));
          return { ...acquisition, lease: observedHandle(acquisition.lease, observer, base, held) };
        } finally {
          acquisitions.add(1, { ...base, "lease.outcome": outcome });
          acquireDuration.record(seconds(performance.now() - startedAt), { ...base, "lease.outcome": outcome });
        }
      });
    },
  };
}

const leaseAttributes = (lease: { fence: bigint; expiresAt: Date }): Attributes => ({
  "lease.fence": lease.fence.toString(),
  "lease.expires_at": lease.expiresAt.toISOString(),
});

function observedHandle<DB, TB extends keyof DB & string>(
  lease: LeaseHandle<DB, TB>,
  observer: Observer,
  base: Attributes,
  held: Held,
): LeaseHandle<DB, TB> {
  let releaseAttempt = 0;
  const { renewals } = observer.instruments;
  const fenced = { ...base, "lease.fence": lease.fence.toString() };
  return Object.assign(Object.create(lease) as LeaseHandle<DB, TB>, {
    renew: () =>
      inSpan(observer, "lease.renew", fenced, async (span) => {
        try {
          const renewed = await lease.renew();
          span.setAttribute("lease.outcome", renewed ? "renewed" : "lost");
          if (renewed) span.setAttribute("lease.expires_at", lease.expiresAt.toISOString());
          else {
            span.addEvent("lease.lost");
            held.lostAt ??= "renewal";
          }
          renewals.add(1, { ...base, "lease.outcome": renewed ? "renewed" : "lost" });
          return renewed;
        } catch (error) {
          renewals.add(1, { ...base, "lease.outcome": "failed" });
          throw error;
        }
      }),
    release: () => {
      releaseAttempt += 1;
      const attempt = { ...fenced, "lease.release.attempt": releaseAttempt, "lease.release.retry": releaseAttempt > 1 };
      return inSpan(observer, "lease.release", attempt, async (span) => {
        const released = await lease.release();
        span.setAttribute("lease.outcome", released ? "released" : "found-nothing");
        return released;
      });
    },
  });
}

function observedSection<DB, TB extends keyof DB & string>(
  section: LeaseSection<DB, TB>,
  observer: Observer,
  base: Attributes,
  held: Held,
): LeaseSection<DB, TB> {
  const fenced = { ...base, "lease.fence": section.lease.fence.toString() };
  return {
    ...section,
    async checkpoint(nextStep, verify) {
      const lost = await inSpan(observer, "lease.checkpoint", { ...fenced, "lease.step": nextStep }, async (span) => {
        try {
          await section.checkpoint(nextStep, verify);
          span.setAttribute("lease.outcome", "held");
          return null;
        } catch (error) {
          // A lost lease is the checkpoint's answer, not its failure: the span says so, and the error goes on.
          if (!(error instanceof LeaseLostError)) throw error;
          span.setAttribute("lease.outcome", "lost");
          span.addEvent("lease.lost", { "lease.step": nextStep });
          held.lostAt = nextStep;
          return error;
        }
      });
      if (lost) throw lost;
    },
    releaseWith: (write) =>
      inSpan(observer, "lease.release", { ...fenced, "lease.release.with_write": true }, async (span) => {
        const released = await section.releaseWith(write);
        span.setAttribute("lease.outcome", released ? "released" : "found-nothing");
        return released;
      }),
  };
}
