import type { ColumnType, Generated } from "kysely";

/**
 * The app's own tables. `users` also carries the identity-action lease columns
 * (`identity_action_locked_at`, `_lock_token`, `_fence`), left out of this type on purpose:
 * only `lib/lease-lock.ts` reads or writes them, so no other query can clobber a lease.
 */
export interface UsersTable {
  id: string;
  display_name: string;
  primary_identity_id: string;
  version: Generated<number>;
}

export interface IdentitiesTable {
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
  created_at: ColumnType<Date, never, never>;
}

export interface AppSecretTable {
  id: ColumnType<boolean, never, never>;
  session_key: ColumnType<string, never, never>;
}

/** The simulated identity provider's tables (schema `idp`). Only `lib/provider-sim` reads or writes them. */
export interface IdpAccountsTable {
  user_id: string;
}

export interface IdpIdentitiesTable {
  provider: string;
  user_id: string;
  account_user_id: string;
  linked_seq: Generated<string>;
}

export interface IdpCallsTable {
  id: Generated<string>;
  at: ColumnType<Date, Date | undefined, never>;
  method: string;
  path: string;
  status: number;
  operation_id: string | null;
  duration_ms: number;
  outcome: string | null;
}

export interface IdpFencesTable {
  account_user_id: string;
  fence: string;
}

export interface IdpRandomStateTable {
  id: ColumnType<boolean, boolean | undefined, never>;
  seed: number | null;
  draws: string;
}

export interface Database {
  users: UsersTable;
  identities: IdentitiesTable;
  lab_settings: LabSettingsTable;
  switch_journal: SwitchJournalTable;
  operation_events: OperationEventsTable;
  idempotency_records: IdempotencyRecordsTable;
  app_secret: AppSecretTable;
  "idp.accounts": IdpAccountsTable;
  "idp.identities": IdpIdentitiesTable;
  "idp.calls": IdpCallsTable;
  "idp.random_state": IdpRandomStateTable;
  "idp.fences": IdpFencesTable;
}
