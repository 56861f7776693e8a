/**
 * The lab's faults in the lease's own statements, as a lock that wraps the product's: releases that fail
 * (the first N attempts of each lease's release), renewals that answer late (a slow database), and a process
 * that has died (after the lab's crash nothing it started answers again: no renewal, no release).
 */
import { setTimeout as pause } from "node:timers/promises";
import type { LeaseHandle, LeaseLock } from "@lease-lock-lab/lease";
import type { CrashPoint } from "../settings-schema";

export interface LockFaults {
  releaseFailures: number;
  slowRenewalMs: number;
}

/** The process an operation runs in, as the lab plays it: once it has died, nothing of it answers again. */
export class PlayedProcess {
  private dead = false;
  private readonly deathHeard: Array<(point: CrashPoint) => void> = [];

  /** Dies at `point`: whoever waits on the process (its operation's caller) hears it, once. */
  die(point: CrashPoint): void {
    if (this.dead) return;
    this.dead = true;
    for (const heard of this.deathHeard) heard(point);
  }

  onDeath(heard: (point: CrashPoint) => void): void {
    this.deathHeard.push(heard);
  }

  /** `work`, or (once dead) a promise that never settles: a dead process sends nothing and hears nothing. */
  whileAlive<T>(work: () => Promise<T>): Promise<T> {
    return this.dead ? new Promise<T>(() => undefined) : work();
  }
}

/** How a failed release looks to the app: the database connection went away under it. */
const releaseFailure = () => new Error("Connection terminated (lab fault: the release failed)");

export function faultyLock<DB, TB extends keyof DB & string>(
  lock: LeaseLock<DB, TB>,
  faults: LockFaults,
  process: PlayedProcess,
): LeaseLock<DB, TB> {
  return {
    ...lock,
    async acquire(db, rowId, options) {
      const taken = await lock.acquire(db, rowId, options);
      return taken.acquired ? { ...taken, lease: faultyHandle(taken.lease, faults, process) } : taken;
    },
  };
}

function faultyHandle<DB, TB extends keyof DB & string>(
  lease: LeaseHandle<DB, TB>,
  faults: LockFaults,
  process: PlayedProcess,
): LeaseHandle<DB, TB> {
  let releases = 0;
  // The handle's other members (its token, fence, live expiry, owner-checked updates) are the lease's own.
  return Object.assign(Object.create(lease) as LeaseHandle<DB, TB>, {
    renew: () =>
      process.whileAlive(async () => {
        if (faults.slowRenewalMs > 0) await pause(faults.slowRenewalMs);
        return lease.renew();
      }),
    holdFor: (ms: number) => process.whileAlive(() => lease.holdFor(ms)),
    release: () =>
      process.whileAlive(async () => {
        releases += 1;
        if (releases <= faults.releaseFailures) throw releaseFailure();
        return lease.release();
      }),
  });
}
