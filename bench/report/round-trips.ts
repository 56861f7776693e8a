/** What one switch costs in database round trips and durable commits, per strategy: counted from the code path. */
import type { Strategy } from "../http-load";

/**
 * Database round trips and durable commits (transactions that write, so wait for the WAL flush) of one
 * switch that changes the primary, counted from the code path (no idempotency key, nothing to recover),
 * the app's own only: the simulated provider's statements are its own database work, inside L. Not
 * counted either: the lab's timeline, which writes each request's lane through a pool of its own while
 * the switch runs (the answer waits for its last write only), and the lab's settings, which each instance
 * holds in memory from their announcements (lib/lab/settings-snapshot.ts).
 */
export const roundTripInventory: Record<Strategy, { roundTrips: number; durableCommits: number; why: string[] }> = {
  lease: {
    roundTrips: 8,
    durableCommits: 5,
    why: [
      "look up the session (1, read)",
      "check the identity is the user's (1, read)",
      "acquire: the lease, the journaled intent (step acquired, from the current primary) and the user row, " +
        "in one statement (1, commit): the switch needs no read of its own, and no write to say it started",
      "read leftover journal entries to recover (1, read): a previous holder may have left a switch half-done",
      "journal step unlinked, then linked (2, commits): recovery needs to know how far a crash got; each write " +
        "is owner-checked and answers whether the lease is unexpired, so it is also the check before the next step",
      "save the new primary and journal step done, in one statement (1, commit)",
      "release (1, commit): the next switch need not wait for the TTL",
    ],
  },
  transaction: {
    roundTrips: 7,
    durableCommits: 1,
    why: [
      "look up the session (1, read)",
      "check the identity is the user's (1, read)",
      "BEGIN; SELECT … FOR UPDATE; read the user; save; COMMIT (5, one commit): the connection is held across both provider calls",
    ],
  },
  advisory: {
    roundTrips: 7,
    durableCommits: 1,
    why: [
      "look up the session (1, read)",
      "check the identity is the user's (1, read)",
      "BEGIN; pg_advisory_xact_lock; read the user; save; COMMIT (5, one commit): the connection is held across both provider calls",
    ],
  },
  optimistic: {
    roundTrips: 5,
    durableCommits: 1,
    why: [
      "look up the session (1, read)",
      "check the identity is the user's (1, read)",
      "read the version (1, read)",
      "read the user (1, read)",
      "save if the version is unchanged (1, commit)",
    ],
  },
  none: {
    roundTrips: 4,
    durableCommits: 1,
    why: [
      "look up the session (1, read)",
      "check the identity is the user's (1, read)",
      "read the user (1, read)",
      "save (1, commit)",
    ],
  },
};
