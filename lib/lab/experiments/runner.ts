/**
 * Runs one experiment at a time, across every app instance: the run holds a session-level advisory lock
 * on a connection of its own (not the app's pool, whose use some experiments measure). It runs in a
 * sandbox: the lab's state and settings are saved first and put back when it ends, so the main page goes
 * on as it was. What it showed is kept instead as a saved run (`runId`), to reopen and replay.
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import pg from "pg";
import type { Database } from "../../../db/schema";
import { config } from "../../core/config";
import { ExperimentNotFound, ExperimentRunning } from "../../core/problems";
import { missingParts, PartsNotRunning } from "../parts";
import type { IdentityProviderClient } from "../../provider/client";
import { labFor } from "./lab";
import { experiments } from "./registry";
import { runMarkers } from "./run-facts";
import { saveRun } from "./runs";
import type { Experiment } from "./types";
import { restoreLabState, saveLabState } from "./sandbox";
import { runHere, runLockKey } from "../run-lock";

export interface ExperimentRun {
  id: string;
  runId: string;
  startedAt: string;
  endedAt: string;
  operationIds: string[];
  observed: Record<string, unknown>;
  verdict: "as-expected" | "unexpected";
  explanation: string;
}

export async function runExperiment(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  id: string,
): Promise<ExperimentRun> {
  const experiment = experiments.find((each) => each.id === id);
  if (!experiment) throw new ExperimentNotFound(id);
  if (runHere.running) throw new ExperimentRunning();
  runHere.running = true;
  try {
    return await runLocked(db, provider, experiment);
  } finally {
    runHere.running = false;
  }
}

async function runLocked(
  db: Kysely<Database>,
  provider: IdentityProviderClient,
  experiment: Experiment,
): Promise<ExperimentRun> {
  const { id } = experiment;
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
    const before = await saveLabState(db);
    const startedAt = new Date();
    const lab = labFor(db, provider);
    try {
      const finding = await experiment.run(lab);
      const { measured, ...recorded } = await lab.recording();
      const run: ExperimentRun = {
        id,
        runId: randomUUID(),
        startedAt: startedAt.toISOString(),
        endedAt: new Date().toISOString(),
        operationIds: lab.operationIds,
        observed: finding.observed,
        verdict: finding.asExpected ? "as-expected" : "unexpected",
        explanation: finding.explanation,
      };
      await saveRun(db, {
        id: run.runId,
        experimentId: id,
        startedAt: run.startedAt,
        endedAt: run.endedAt,
        verdict: run.verdict,
        explanation: run.explanation,
        steps: runMarkers(recorded, measured),
        ...recorded,
        observed: run.observed,
        imported: false,
      });
      return run;
    } finally {
      await restoreLabState(db, before);
    }
  } finally {
    await lockHolder.end().catch(() => undefined); // ending the session releases its lock
  }
}
