/** What one switch costs in database round trips and durable commits, per strategy: counted from the code path. */
import type { Strategy } from "../http-load";

/**
 * Database round trips and durable commits (transactions that write, so wait for the WAL flush) of one
 * switch that changes the primary, counted from the code path (no idempotency key, nothing to recover),
 * the app's own only: the simulated provider's statements are its own database work, inside L. Not
 * counted either: the lab's timeline, which writes each request's lane through a pool of its own once, at
 * its answer (and as it starts, under a strategy without a lease), and the lab's settings, which each instance
 * holds in memory from their announcements (lib/lab/settings-snapshot.ts).
 */
const requirement = "check the session and the identity are the user's, in one statement (1, read)";

export const roundTripInventory: Record<Strategy, { roundTrips: number; durableCommits: number; why: string[] }> = {
  lease: {
    roundTrips: 3,
    durableCommits: 3,
    why: [
      "acquire, in one statement (1, commit): the session and the identity checked in its WHERE, the lease taken, " +
        "the journaled intent (step acquired, from the current primary), the user row, and the entries an earlier " +
        "holder left to recover, read with it (FOR SHARE)",
      "journal step unlinked (1, commit): recovery needs to know that a crash got past the unlink; the write is " +
        "owner-checked and answers whether the lease is unexpired, so it is also the check before the link",
      "save the new primary, journal step done and release the lease, in one owner-checked statement (1, commit)",
    ],
  },
  transaction: {
    roundTrips: 6,
    durableCommits: 1,
    why: [
      requirement,
      "BEGIN; SELECT … FOR UPDATE; read the user; save; COMMIT (5, one commit): the connection is held across both provider calls",
    ],
  },
  advisory: {
    roundTrips: 6,
    durableCommits: 1,
    why: [
      requirement,
      "BEGIN; pg_advisory_xact_lock; read the user; save; COMMIT (5, one commit): the connection is held across both provider calls",
    ],
  },
  optimistic: {
    roundTrips: 4,
    durableCommits: 1,
    why: [
      requirement,
      "read the version (1, read)",
      "read the user (1, read)",
      "save if the version is unchanged (1, commit)",
    ],
  },
  none: {
    roundTrips: 3,
    durableCommits: 1,
    why: [requirement, "read the user (1, read)", "save (1, commit)"],
  },
};
