import { expect, test } from "@playwright/test";
import { startPgBouncer, type RunningPgBouncer } from "../scripts/parts/pgbouncer";
import { startRedis, type RunningRedis } from "../scripts/parts/redis";
import { startApp, type RunningApp } from "../test/harness/app-server";
import { labDatabaseUrl, resetLab, seriousViolations } from "./lab";
import { expectWholeRun, openCard, runCard, savedRunOf } from "./learn-cards";

// The cards that need production parts, in Chromium against real ones: a redis-server and a PgBouncer in
// transaction pooling started for this test, and an instance on the worker's database told of both, as
// `npm run dev -- --pgbouncer --redis` runs it.
let redis: RunningRedis | undefined;
let pgbouncer: RunningPgBouncer | undefined;
let app: RunningApp | undefined;

test.afterEach(async () => {
  await app?.stop();
  await pgbouncer?.stop();
  await redis?.stop();
  [app, pgbouncer, redis] = [undefined, undefined, undefined];
});

test("against a real PgBouncer and redis-server, the pooler, Redis-restart and three-way q5 cards run and draw their whole run", async ({
  page,
  request,
}) => {
  test.setTimeout(240_000);
  await resetLab(request);
  const databaseUrl = labDatabaseUrl();
  redis = await startRedis(Number(process.env.PARTS_REDIS_PORT));
  pgbouncer = await startPgBouncer(databaseUrl, Number(process.env.PARTS_PGBOUNCER_PORT));
  app = await startApp({
    databaseUrl,
    port: Number(process.env.PARTS_APP_PORT),
    env: { ...pgbouncer.appEnv(databaseUrl), REDIS_URL: redis.url, LAB_INSTANCE: "parts" },
  });
  await page.goto(`${app.baseUrl}/learn`);
  for (const id of ["pooler-strands-session-lock", "redis-restart-loses-lock", "q5-advisory-or-lease"]) {
    const card = await runCard(page, id);
    await expect(card).not.toContainText("not available here");
    await expectWholeRun(card, (await savedRunOf(page, card)).run);
  }
  // q5 measured all three, Redis included (without a redis-server its answer says Redis was not measured).
  const q5 = page.locator('section[data-experiment="q5-advisory-or-lease"]');
  const { run } = await savedRunOf(page, q5);
  expect(JSON.stringify(run)).not.toContain("Redis was not measured");
  expect(run.variants.map((variant: { label: string }) => variant.label).join(" ")).toMatch(/redis/i);
  expect(await seriousViolations(page)).toEqual([]);
});

test("a card whose part is not answering becomes runnable when it answers, without a reload", async ({
  page,
  request,
}) => {
  await resetLab(request);
  const port = Number(process.env.PARTS_REDIS_PORT);
  // The instance is told of a redis-server that is not running yet.
  app = await startApp({
    databaseUrl: labDatabaseUrl(),
    port: Number(process.env.PARTS_APP_PORT),
    env: { REDIS_URL: `redis://127.0.0.1:${port}`, LAB_INSTANCE: "parts" },
  });
  const listed = await page.request.get(`${app.baseUrl}/api/lab/experiments`);
  const { experiments } = (await listed.json()) as { experiments: { id: string; awaitingParts: boolean }[] };
  expect(experiments.find((each) => each.id === "redis-restart-loses-lock")?.awaitingParts).toBe(true);
  await page.goto(`${app.baseUrl}/learn`);
  const card = await openCard(page, "redis-restart-loses-lock");
  // It says it waits for a part the instance is told of, not that the instance runs without it.
  await expect(card.getByRole("button", { name: "Run (waiting for redis-server)" })).toHaveAttribute(
    "aria-disabled",
    "true",
  );
  await expect(card).toContainText("which this instance is told of but which does not answer now");
  await expect(card).not.toContainText("start the lab with");
  redis = await startRedis(port);
  await expect(card.getByRole("button", { name: "Run", exact: true })).toHaveAttribute("aria-disabled", "false");
});
