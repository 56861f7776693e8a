import type { ColumnType, Generated } from "kysely";

/** The simulated identity provider's own tables (schema `idp`): only lib/provider-sim reads or writes them. */
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
  /** The generation that fence was issued in: the provider compares (generation, fence) in that order. */
  generation: string;
  /** The operation that brought the highest fence, when its calls named one. */
  holder: string | null;
}

export interface IdpRandomStateTable {
  id: ColumnType<boolean, boolean | undefined, never>;
  seed: number | null;
  draws: string;
}

export interface IdpDatabase {
  "idp.accounts": IdpAccountsTable;
  "idp.identities": IdpIdentitiesTable;
  "idp.calls": IdpCallsTable;
  "idp.random_state": IdpRandomStateTable;
  "idp.fences": IdpFencesTable;
}
