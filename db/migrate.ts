import { Migrator, type Kysely, type Migration, type MigrationProvider } from "kysely";
import * as initial from "./migrations/0001_initial";
import * as labStrategiesAndChaos from "./migrations/0002_lab_strategies_and_chaos";
import * as recoveryFencingIdempotency from "./migrations/0003_recovery_fencing_idempotency";
import * as leaseLockedUntil from "./migrations/0004_lease_locked_until";
import * as sessions from "./migrations/0005_sessions";
import * as journalInFlight from "./migrations/0006_journal_in_flight";
import * as timeline from "./migrations/0007_timeline";
import * as idpCallFunctions from "./migrations/0008_idp_call_functions";
import * as idempotencyExpiry from "./migrations/0010_idempotency_expiry";
import * as fenceHolder from "./migrations/0011_fence_holder";
import * as experimentRuns from "./migrations/0012_experiment_runs";
import * as journalNotify from "./migrations/0013_journal_notify";
import * as quietNotifications from "./migrations/0014_quiet_notifications";
import * as fenceGeneration from "./migrations/0015_fence_generation";
import * as watchedNotifications from "./migrations/0016_watched_notifications";
import * as seededLeaseNotify from "./migrations/0017_seeded_lease_notify";
import * as streamedRowIds from "./migrations/0018_streamed_row_ids";
import * as watchedProviderCalls from "./migrations/0019_watched_provider_calls";

// Listed statically (not read from the folder) so that bundlers and tsx see the same set.
const migrations: Record<string, Migration> = {
  "0001_initial": initial,
  "0002_lab_strategies_and_chaos": labStrategiesAndChaos,
  "0003_recovery_fencing_idempotency": recoveryFencingIdempotency,
  "0004_lease_locked_until": leaseLockedUntil,
  "0005_sessions": sessions,
  "0006_journal_in_flight": journalInFlight,
  "0007_timeline": timeline,
  "0008_idp_call_functions": idpCallFunctions,
  "0010_idempotency_expiry": idempotencyExpiry,
  "0011_fence_holder": fenceHolder,
  "0012_experiment_runs": experimentRuns,
  "0013_journal_notify": journalNotify,
  "0014_quiet_notifications": quietNotifications,
  "0015_fence_generation": fenceGeneration,
  "0016_watched_notifications": watchedNotifications,
  "0017_seeded_lease_notify": seededLeaseNotify,
  "0018_streamed_row_ids": streamedRowIds,
  "0019_watched_provider_calls": watchedProviderCalls,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export async function migrateToLatest<DB>(db: Kysely<DB>): Promise<void> {
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  for (const result of results ?? []) {
    if (result.status === "Error") throw new Error(`migration ${result.migrationName} failed`, { cause: error });
  }
  if (error) throw error;
}
