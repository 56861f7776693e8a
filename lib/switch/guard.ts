/**
 * How the switch's steps are kept apart from a concurrent switch for the same user. A guard runs the
 * steps' body with the database handle to use, the deadline that bounds the provider calls, the save and
 * the checkpoints; the steps themselves (switch-primary.ts) never ask which guard is in force.
 */
import type { Kysely } from "kysely";
import type { Database, JournalStep } from "../../db/schema";
import type { Deadline } from "../lease";
import type { JournalEntry } from "./journal";
import type { User } from "./users";

export interface GuardRequest {
  db: Kysely<Database>;
  userId: string;
  operationId: string;
  /** The identity the operation means to make primary (part of the lease's recorded intent); null: none. */
  targetIdentityId: string | null;
}

export interface GuardedSection {
  db: Kysely<Database>;
  /** Every provider call made inside the section carries its signal. */
  deadline: Deadline;
  /** The lease's fencing token, for guards that have one, and the generation it was issued in. */
  fence?: bigint;
  generation?: bigint;
  /**
   * Saves the user's new primary (and nothing else of the row); `finishing`: the switch's last write,
   * which a journaling guard sends together with the record that the operation is done. Under the lease
   * the save carries the lease's condition: when the lease is gone it changes nothing and throws `LeaseLost`.
   */
  savePrimary(primaryIdentityId: string, options?: { finishing: boolean }): Promise<void>;
  /**
   * The user as the guard read it when it took hold (the lease's acquiring statement returns the row), if
   * nothing can have changed it since; otherwise undefined, and the steps read it themselves.
   */
  acquiredUser?: User;
  /** Switches that earlier holders left unfinished, to reconcile before doing anything else. */
  leftovers: JournalEntry[];
  markRecovered(entry: JournalEntry, message: string): Promise<void>;
  /**
   * Records the step just reached (with the primary the switch starts from, at `acquired`; nothing when
   * the record already says so) and, before the next irreversible step, makes sure the guard still holds.
   */
  reached(step: JournalStep, fromIdentityId?: string): Promise<void>;
  /** Before a provider write that `reached` does not precede (recovery's link): the guard still holds. */
  ensureHeld(nextStep: string): Promise<void>;
  /** A provider write got no answer: it may still land, so nobody may trust a read until it cannot. */
  callMayStillLand(): void;
  /**
   * Before reading the provider to settle `entry`: makes sure no write of its operation can still land
   * (a fenced read shuts them out, or it waits for the provider's limit), or refuses.
   */
  settleInFlight(entry: JournalEntry): Promise<void>;
}

export interface Guard {
  run<T>(request: GuardRequest, body: (section: GuardedSection) => Promise<T>): Promise<T>;
}

/** The parts of a section that only a journaling guard (the lease) fills in. */
export const unjournaled = {
  leftovers: [],
  markRecovered: async () => undefined,
  reached: async () => undefined,
  ensureHeld: async () => undefined,
  callMayStillLand: () => undefined,
  settleInFlight: async () => undefined,
} satisfies Partial<GuardedSection>;
