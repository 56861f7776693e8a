import pg from "pg";
import { afterAll, expect, inject, it } from "vitest";
import { createDb } from "../../db/connection";
import { outsideExperimentRuns, runHere, runLockKey } from "./run-lock";

const { db } = createDb(inject("databaseUrl"), 2);
const runner = new pg.Client({ connectionString: inject("databaseUrl") });
await runner.connect();
afterAll(async () => {
  await runner.end();
  await db.destroy();
});

/** The run's lock, as runner.ts takes it on a connection of its own (another instance's, say). */
const runnerTakes = async () =>
  (await runner.query<{ taken: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS taken", [runLockKey])).rows[0]!
    .taken;
const runnerGivesBack = () => runner.query("SELECT pg_advisory_unlock(hashtext($1))", [runLockKey]);

const outcome = (change: () => Promise<string>) =>
  outsideExperimentRuns(change, db).then(
    (value) => ({ value }),
    (problem: { status: number; slug: string }) => ({ status: problem.status, slug: problem.slug }),
  );

it("refuses a change while a run holds the lock, and makes it before and after", async () => {
  expect(await outcome(async () => "before")).toEqual({ value: "before" });
  expect(await runnerTakes()).toBe(true);
  let made = false;
  expect(
    await outcome(async () => {
      made = true;
      return "during";
    }),
  ).toEqual({ status: 409, slug: "experiment-running" });
  expect(made).toBe(false);
  await runnerGivesBack();
  expect(await outcome(async () => "after")).toEqual({ value: "after" });
});

it("keeps a run from starting until the change has ended, and leaves no lock behind", async () => {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  let started!: () => void;
  const changing = new Promise<void>((resolve) => (started = resolve));
  const change = outcome(async () => {
    started();
    await ended;
    return "made";
  });
  await changing;
  expect(await runnerTakes()).toBe(false);
  end();
  expect(await change).toEqual({ value: "made" });
  expect(await runnerTakes()).toBe(true);
  await runnerGivesBack();
  // A change that fails gives the lock back too.
  expect(await outcome(() => Promise.reject(Object.assign(new Error("no"), { status: 500, slug: "x" })))).toEqual({
    status: 500,
    slug: "x",
  });
  expect(await runnerTakes()).toBe(true);
  await runnerGivesBack();
});

it("refuses while this process runs one, whose lock a failover may have taken with its primary", async () => {
  runHere.running = true;
  try {
    expect(await outcome(async () => "during")).toEqual({ status: 409, slug: "experiment-running" });
  } finally {
    runHere.running = false;
  }
});
