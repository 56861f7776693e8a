/**
 * How the switch's steps are kept apart from a concurrent switch for the same user. A guard runs the
 * steps' body with the database handle to use, the deadline that bounds the provider calls, the save and
 * the checkpoints; the steps themselves (switch-primary.ts) never ask which guard is in force. Here too:
 * the steps' names and order, and what a request requires to run at all.
 */
import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Database, JournalStep } from "../../db/schema";
import { IdentityNotLinked, UserNotFound, type Problem } from "../core/problems";
import { executeOnce, MadeOnce, mergedValues, param, type Deadline, type ParamValues } from "@lease-lock-lab/lease";
import type { JournalEntry } from "./journal";
import { findUser, type User } from "./users";

/**
 * The steps an operation reaches, in order: acquired → (unlink) → unlinked → (link) → linked → (save). The
 * journal records the step each operation reached, and each step is the ownership check before the
 * irreversible write that follows it. Every part of the code that names a step, or the write after one,
 * takes it from here.
 */
export type SwitchStep = Extract<JournalStep, "acquired" | "unlinked" | "linked">;

/** The irreversible write each step comes before: the checkpoint that guards it is named after it. */
export const writeAfter = { acquired: "unlink", unlinked: "link", linked: "save" } as const satisfies Record<
  SwitchStep,
  string
>;

export type SwitchWrite = (typeof writeAfter)[SwitchStep];

/** The provider write recovery sends to finish a switch left unlinked: it has its own checkpoint. */
export const recoveryLink = "recover-link";

export interface GuardRequest {
  db: Kysely<Database>;
  userId: string;
  operationId: string;
  /** The identity the operation means to make primary (part of the lease's recorded intent); null: none. */
  targetIdentityId: string | null;
  /** What must be so for the operation to run (see `checksRequirements`). */
  requires?: Requirement;
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
  reached(step: SwitchStep, fromIdentityId?: string): Promise<void>;
  /** Before a provider write that `reached` does not precede (recovery's link): the guard still holds. */
  ensureHeld(nextWrite: string): Promise<void>;
  /** A provider write got no answer: it may still land, so nobody may trust a read until it cannot. */
  callMayStillLand(): void;
  /**
   * Before reading the provider to settle `entry`: makes sure no write of its operation can still land
   * (a fenced read shuts them out, or it waits for the provider's limit), or refuses.
   */
  settleInFlight(entry: JournalEntry): Promise<void>;
  /**
   * How long `settleInFlight` will pause for `entry`'s writes to stop being able to land: 0 when it will not (none
   * can land, or the wait would outlast the deadline and it refuses instead).
   */
  inFlightWaitMs(entry: JournalEntry): number;
}

export interface Guard {
  run<T>(request: GuardRequest, body: (section: GuardedSection) => Promise<T>): Promise<T>;
  /**
   * True when `run` checks `request.requires` itself as it takes hold (a lease in its acquiring statement, a
   * transaction on the connection it holds); otherwise the switch checks it before `run`. A guard that wraps
   * another passes this on.
   */
  checksRequirements?: boolean;
}

/** The parts of a section that only a journaling guard (the lease) fills in. */
export const unjournaled = {
  leftovers: [],
  markRecovered: async () => undefined,
  reached: async () => undefined,
  ensureHeld: async () => undefined,
  callMayStillLand: () => undefined,
  settleInFlight: async () => undefined,
  inFlightWaitMs: () => 0,
} satisfies Partial<GuardedSection>;

/**
 * What must be so for a switch to run (the caller's session is this user's, the identity is one of the
 * user's own), as one SQL condition that the statement taking hold checks with everything else: one round
 * trip. Only when it fails are the parts read again, to say which one (a 401, a 403, a 404).
 */
export interface Requirement {
  /**
   * True while it holds, for the WHERE of the statement that takes hold: written once, the same object for
   * every request of its kind (so that statement is compiled once), with `param`s where a request's values go.
   */
  condition: RawBuilder<boolean>;
  /** This request's values of the condition's `param`s. */
  values: ParamValues;
  /** Why it does not hold now (read on that path only); null when it does hold now. */
  unmet(db: Kysely<Database>): Promise<Problem | null>;
}

const holds = async (db: Kysely<Database>, condition: RawBuilder<boolean>, values: ParamValues): Promise<boolean> =>
  (await executeOnce(db, sql<{ holds: boolean }>`SELECT ${condition} AS holds`, values)).rows[0]!.holds;

/** The requirement that `condition` holds with `values`; when it does not, `why` says what that means. */
export const requirement = (
  condition: RawBuilder<boolean>,
  values: ParamValues,
  why: (db: Kysely<Database>) => Promise<Problem>,
): Requirement => ({
  condition,
  values,
  unmet: async (db) => ((await holds(db, condition, values)) ? null : why(db)),
});

// The same parts' conditions give the same combined condition: the acquiring statement stays one shape.
const combined = new MadeOnce<RawBuilder<boolean>>();

/** Every part must hold (their `param`s' names apart, or the same values: `mergedValues`); the first unmet says why. */
export function allOf(parts: Requirement[]): Requirement {
  const conditions = parts.map((part) => part.condition);
  return {
    condition: combined.get(conditions, () => sql<boolean>`(${sql.join(conditions, sql` AND `)})`),
    values: mergedValues(...parts.map((part) => part.values)),
    async unmet(db) {
      for (const part of parts) {
        const why = await part.unmet(db);
        if (why) return why;
      }
      return null;
    },
  };
}

/** Checks a requirement in a statement of its own, for guards that take hold without one of theirs. */
export async function requireNow(db: Kysely<Database>, required: Requirement): Promise<void> {
  const why = await required.unmet(db);
  if (why) throw why;
}

const identityIsTheUsers = sql<boolean>`EXISTS (SELECT 1 FROM identities
                                                 WHERE user_id = ${param("userId")} AND id = ${param("identityId")})`;

/** The identity is one of the user's own: else 404, not linked (or no such user). */
export const identityOfUser = (userId: string, identityId: string): Requirement =>
  requirement(identityIsTheUsers, { userId, identityId }, async (db) =>
    (await findUser(db, userId)) ? new IdentityNotLinked(identityId, userId) : new UserNotFound(userId),
  );
