/**
 * Runs one experiment at a time, across every app instance: the run holds a session-level advisory lock
 * on a connection of its own (not the app's pool, whose use some experiments measure). It starts from the
 * seed and leaves the lab as the run ended, so the timeline, the audit and the provider show it.
 */
import type { Kysely } from "kysely";
import pg from "pg";
import type { Database } from "../../../db/schema";
import { config } from "../../core/config";
import { ExperimentNotFound, ExperimentRunning } from "../../core/problems";
import { missingParts, PartsNotRunning } from "../parts";
import type { IdentityProviderClient } from "../../provider/client";
import { labFor } from "./lab";
import { experiments } from "./registry";

export interface ExperimentRun {
  id: string;
  startedAt: string;
  endedAt: string;
  operationIds: string[];
  observed: Record<string, unknown>;
  verdict: "as-expected" | "unexpected";
  explanation: string;
}

const runLockKey = "lease-lock-lab.experiments";

export async function runExperiment(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  id: string,
): Promise<ExperimentRun> {
  const experiment = experiments.find((each) => each.id === id);
  if (!experiment) throw new ExperimentNotFound(id);
  const missing = await missingParts(experiment.needs ?? []);
  if (missing.length > 0) throw new PartsNotRunning(id, missing);
  // Direct: a session lock through a transaction pooler would stay on a server connection (see
  // pooler-strands-session-lock), and no other run could start.
  const lockHolder = new pg.Client({
    connectionString: config.directDatabaseUrl,
    application_name: "lab:experiment-run",
  });
  lockHolder.on("error", (error) => console.error("[experiment] run lock connection lost:", error.message));
  await lockHolder.connect();
  try {
    const { rows } = await lockHolder.query<{ locked: boolean }>(
      "SELECT pg_try_advisory_lock(hashtext($1)) AS locked",
      [runLockKey],
    );
    if (!rows[0]?.locked) throw new ExperimentRunning();
    const startedAt = new Date();
    const lab = labFor(db, provider);
    const finding = await experiment.run(lab);
    return {
      id,
      startedAt: startedAt.toISOString(),
      endedAt: new Date().toISOString(),
      operationIds: lab.operationIds,
      observed: finding.observed,
      verdict: finding.asExpected ? "as-expected" : "unexpected",
      explanation: finding.explanation,
    };
  } finally {
    await lockHolder.end().catch(() => undefined); // ending the session releases its lock
  }
}
