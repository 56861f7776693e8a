import { expect, test } from "@playwright/test";
import { classroomViewports, expectNoSidewaysScroll, resetLab, seriousViolations } from "./lab";
import { expectWholeRun, runCard, savedRunOf } from "./learn-cards";

test.beforeEach(async ({ request }) => {
  await resetLab(request);
});

// Every card the e2e apps can run (they run without PgBouncer and Redis), on both of the class's screens, in
// groups that run side by side.
const cardGroups = [
  ["q1-transaction-holds-connections", "q2-simultaneous-acquire", "q3-ttl-too-short", "q4-lock-column-mapped"],
  ["q3-ttl-too-long", "q5-advisory-or-lease", "f1-crash-after-acquire"],
  ["f2-lease-stolen", "f3-release-fails", "f4-race-to-acquire", "advisory-not-enforced", "in-process-mutex"],
];
for (const { width, height } of classroomViewports)
  for (const ids of cardGroups)
    test(`at ${width} px each card draws its whole run, every variant and its markers, and nothing overflows (${ids.join(", ")})`, async ({
      page,
    }) => {
      test.setTimeout(60_000 * ids.length);
      await page.setViewportSize({ width, height });
      await page.goto("/learn");
      for (const id of ids) {
        const card = await runCard(page, id);
        await expectWholeRun(page, card);
        await expectNoSidewaysScroll(page);
      }
      expect(await seriousViolations(page)).toEqual([]);
    });

test("the cards that need PgBouncer or Redis say how to start the lab with them, and do not run here", async ({
  page,
}) => {
  await page.goto("/learn");
  for (const [id, command] of [
    ["pooler-strands-session-lock", "npm run dev -- --pgbouncer"],
    ["redis-restart-loses-lock", "npm run dev -- --redis"],
  ] as const) {
    const card = page.locator(`section[data-experiment="${id}"]`);
    await expect(card).toContainText(`start the lab with ${command}`);
    const button = card.getByRole("button", { name: "Run (not available here)" });
    await expect(button).toHaveAttribute("aria-disabled", "true");
    // Focusable but inert (Playwright will not click an aria-disabled button): Enter starts nothing.
    await button.focus();
    await page.keyboard.press("Enter");
    await expect(card.getByRole("progressbar")).toHaveCount(0);
    await expect(card.getByRole("status")).toHaveText("");
  }
  // Every card is listed: the ones that run here are drawn by the tests above.
  await expect(page.locator("section[data-experiment]")).toHaveCount(cardGroups.flat().length + 2);
});

test("a run survives navigation, reopens at its URL and steps phase by phase; a bad import is refused", async ({
  page,
}) => {
  await page.goto("/learn");
  const card = await runCard(page, "advisory-not-enforced");
  const { runId, run } = await savedRunOf(page, card);
  const verdict = run.verdict === "as-expected" ? "as expected" : "unexpected";

  // Away and back: the card shows its last run again.
  await page.getByRole("link", { name: "Back to the lab" }).click();
  await expect(page).toHaveURL(/\/$/);
  await page.goBack();
  await expect(page.locator('section[data-experiment="advisory-not-enforced"]').getByRole("status")).toHaveText(
    `Verdict: ${verdict}`,
  );

  await page.goto(`/learn/runs/${runId}`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("A second code path ignores the lease");
  const slider = page.getByRole("slider", { name: "Moment" });
  await slider.focus();
  await page.keyboard.press("Home");
  await expect(page.locator(".tl-mark")).toHaveCount(0);
  const leaseRow = page.locator(".replay-state dt", { hasText: "Lease row" }).locator("xpath=following-sibling::dd[1]");
  await expect(leaseRow).toHaveText("free");
  const next = page.getByRole("button", { name: "Next step ▶" });
  const seen = new Set<string>();
  let previousMoment = "";
  for (let step = 0; step < 200 && (await next.isEnabled()); step++) {
    await next.click();
    const moment = (await page.locator(".replay-at").textContent())!;
    expect(moment).not.toBe(previousMoment);
    previousMoment = moment;
    seen.add((await leaseRow.textContent())!);
  }
  expect([...seen].some((text) => text.startsWith("held by switch under the lease"))).toBe(true);
  await expect(page.locator(".tl-mark")).toHaveCount(run.steps.length);
  expect(await seriousViolations(page)).toEqual([]);

  await page.goto("/learn");
  await page.getByLabel("Import a saved run (JSON)").setInputFiles({
    name: "not-a-run.json",
    mimeType: "application/json",
    buffer: Buffer.from(JSON.stringify({ experimentId: "f2-lease-stolen", verdict: "maybe" })),
  });
  await expect(page.locator(".import-run").getByRole("alert")).toContainText("The file was not imported");

  await page.getByLabel("Import a saved run (JSON)").setInputFiles({
    name: "run.json",
    mimeType: "application/json",
    buffer: Buffer.from(JSON.stringify(run)),
  });
  await expect(page).toHaveURL(/\/learn\/runs\/[0-9a-f-]{36}$/);
  expect(page.url()).not.toContain(runId);
  await expect(page.getByText("(imported)")).toBeVisible();
});
