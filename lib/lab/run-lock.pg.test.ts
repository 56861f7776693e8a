import pg from "pg";
import { afterAll, expect, inject, it } from "vitest";
import { createDb } from "../../db/connection";
import { refuseWhileExperimentRuns, runHere, runLockKey } from "./run-lock";

const { db } = createDb(inject("databaseUrl"), 2);
const run = new pg.Client({ connectionString: inject("databaseUrl") });
await run.connect();
afterAll(async () => {
  await run.end();
  await db.destroy();
});

const refusal = () =>
  refuseWhileExperimentRuns(db).then(
    () => null,
    (problem: { status: number; slug: string }) => problem,
  );

it("refuses while a run holds the lock on another instance's connection, and not before or after", async () => {
  expect(await refusal()).toBeNull();
  // As runner.ts takes it, on a connection of its own.
  await run.query("SELECT pg_advisory_lock(hashtext($1))", [runLockKey]);
  expect(await refusal()).toMatchObject({ status: 409, slug: "experiment-running" });
  await run.query("SELECT pg_advisory_unlock(hashtext($1))", [runLockKey]);
  // The check itself left no lock behind: the run's exclusive lock is free to take again at once.
  expect(await refusal()).toBeNull();
  const { rows } = await run.query<{ taken: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS taken", [
    runLockKey,
  ]);
  expect(rows[0]!.taken).toBe(true);
  await run.query("SELECT pg_advisory_unlock(hashtext($1))", [runLockKey]);
});

it("refuses while this process runs one, whose lock a failover may have taken with its primary", async () => {
  runHere.running = true;
  try {
    expect(await refusal()).toMatchObject({ status: 409, slug: "experiment-running" });
  } finally {
    runHere.running = false;
  }
  expect(await refusal()).toBeNull();
});
