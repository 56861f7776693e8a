import type { ColumnType, Generated } from "kysely";

/**
 * The app's own tables (the simulated provider's `idp` schema has its own type, in lib/provider-sim).
 * `users` carries the identity-action lease: only the lease lock writes those columns; the user's own
 * save (lib/switch/users.ts) names the columns it writes and leaves them alone.
 */
export interface UsersTable {
  id: string;
  display_name: string;
  primary_identity_id: string;
  version: Generated<number>;
  identity_action_locked_at: Date | null;
  identity_action_locked_until: Date | null;
  identity_action_lock_token: string | null;
  identity_action_fence: ColumnType<string, string | undefined, string>;
  /** The generation (the primary's timeline) the last lease was taken in: lib/lease's `primaryGeneration`. */
  identity_action_generation: ColumnType<string, string | undefined, string>;
}

/** An identity's id is the provider's user id, `"{provider}|{providerUserId}"`, e.g. `"github|8812"`. */
export const identityIdOf = (provider: string, providerUserId: string): string => `${provider}|${providerUserId}`;

/** Splits an identity id at its first bar (the provider's user id may contain more). */
export function splitIdentityId(identityId: string): { provider: string; providerUserId: string } {
  const bar = identityId.indexOf("|");
  return { provider: identityId.slice(0, bar), providerUserId: identityId.slice(bar + 1) };
}

export interface IdentitiesTable {
  /** `identityIdOf(provider, provider_user_id)` */
  id: string;
  user_id: string;
  provider: string;
  provider_user_id: string;
  label: string;
  position: number;
}

export interface LabSettingsTable {
  id: ColumnType<boolean, boolean | undefined, never>;
  settings: ColumnType<unknown, string, string>;
}

export type JournalStep = "acquired" | "unlinked" | "linked" | "saved" | "done" | "resolved";

export interface SwitchJournalTable {
  id: Generated<string>;
  user_id: string;
  operation_id: string;
  fence: string;
  from_identity_id: string;
  to_identity_id: string;
  step: JournalStep;
  /** How the operation ended when it did not finish (its error), null while running or after a crash. */
  ended_with: string | null;
  /** Until when a provider write of this operation may still land (its answer was lost, or it is running). */
  in_flight_until: ColumnType<Date | null, never, never>;
  /** The operation that recovered this entry. */
  resolved_by: string | null;
  created_at: ColumnType<Date, never, never>;
  updated_at: ColumnType<Date, never, Date>;
}

export interface OperationEventsTable {
  id: Generated<string>;
  at: ColumnType<Date, never, never>;
  user_id: string;
  operation_id: string | null;
  kind: string;
  message: string;
}

export interface IdempotencyRecordsTable {
  user_id: string;
  key: string;
  request_hash: string;
  operation_id: string;
  status: number | null;
  body: ColumnType<unknown, string | null, string | null>;
  headers: ColumnType<Record<string, string> | null, string | null, string | null>;
  // Set again when an expired record's key is claimed afresh.
  created_at: ColumnType<Date, never, Date>;
}

export interface AppSecretTable {
  id: ColumnType<boolean, never, never>;
  session_key: ColumnType<string, never, never>;
}

/** A signed-in session: its cookie works while this row exists and has not expired. */
export interface SessionsTable {
  id: Generated<string>;
  user_id: string;
  expires_at: Date;
  created_at: ColumnType<Date, never, never>;
}

/** One operation's lane on the timeline: written by the instance that runs it (lib/lab/timeline.ts). */
export interface OperationLanesTable {
  operation_id: string;
  user_id: string;
  instance: string;
  strategy: string;
  to_identity_id: string | null;
  requested_at: Date;
  answered_at: Date | null;
  status: number | null;
  problem_type: string | null;
  lease: ColumnType<unknown, string | null, string | null>;
  phases: ColumnType<unknown, string, string>;
}

/** A saved experiment run (lib/lab/experiments/runs.ts): its whole record as the API answers it. */
export interface ExperimentRunsTable {
  id: string;
  experiment_id: string;
  started_at: Date;
  ended_at: Date;
  imported: ColumnType<boolean, boolean | undefined, never>;
  record: ColumnType<unknown, string, never>;
  created_at: ColumnType<Date, never, never>;
}

export interface Database {
  users: UsersTable;
  identities: IdentitiesTable;
  lab_settings: LabSettingsTable;
  switch_journal: SwitchJournalTable;
  operation_events: OperationEventsTable;
  idempotency_records: IdempotencyRecordsTable;
  app_secret: AppSecretTable;
  sessions: SessionsTable;
  operation_lanes: OperationLanesTable;
  experiment_runs: ExperimentRunsTable;
}
