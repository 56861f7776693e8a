import { expect, test } from "@playwright/test";
import { classroomViewports, expectNoSidewaysScroll, resetLab, seriousViolations } from "./lab";
import { cardSummary, expectWholeRun, openCard, runCard, savedRunOf } from "./learn-cards";

test.beforeEach(async ({ request }) => {
  await resetLab(request);
});

// Every card's whole run, on both screens, is the course's test (e2e/course.spec.ts): it runs every lesson.

test("every card is folded to its question and its last verdict, so the page stays short", async ({
  page,
  request,
}) => {
  const { experiments } = await (await request.get("/api/lab/experiments")).json();
  await page.goto("/learn");
  const cards = page.locator("section[data-experiment]");
  await expect(cards).toHaveCount(experiments.length);
  await expect(page.locator("section[data-experiment] details[open]")).toHaveCount(0);
  for (const card of experiments) {
    const summary = cardSummary(page.locator(`section[data-experiment="${card.id}"]`));
    await expect(summary).toContainText(card.question);
    await expect(summary).toContainText("not run yet");
  }
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  expect(height).toBeLessThan(experiments.length * 200);
  // No raw Markdown: a card's `code` is set as code.
  const card = await openCard(page, "q1-transaction-holds-connections");
  await card.getByRole("radio").first().check();
  await expect(card.locator(".expected code").first()).toBeVisible();
  expect(await card.innerText()).not.toContain("`");
});

for (const { width, height } of classroomViewports)
  test(`at ${width} px a card asks its prediction before Run, then draws its whole run beside it`, async ({ page }) => {
    await page.setViewportSize({ width, height });
    await page.goto("/learn");
    const card = await openCard(page, "f4-race-to-acquire");
    const expected = card.locator(".expected");
    await expect(expected).not.toContainText("Expected:");
    const radios = card.getByRole("radio");
    expect(await radios.count()).toBeGreaterThanOrEqual(2);
    await radios.nth(1).check();
    await expect(expected).toContainText("Expected:");
    await runCard(page, "f4-race-to-acquire");
    const { run, href } = await savedRunOf(page, card);
    expect(href).toMatch(/\?predicted=b$/);
    await expect(card.locator(".prediction-verdict")).toContainText("You predicted “");
    await expectWholeRun(card, run);
    await expectNoSidewaysScroll(page);
    expect(await seriousViolations(page)).toEqual([]);
    // Folded again, the card says how its last run went.
    await cardSummary(card).click();
    await expect(cardSummary(card)).toContainText(/last run (as expected|unexpected)/);
  });

test("the cards that need PgBouncer or Redis say how to start the lab with them, and do not run here", async ({
  page,
}) => {
  await page.goto("/learn");
  const runnable = (await openCard(page, "f4-race-to-acquire")).getByRole("button", { name: "Run", exact: true });
  const enabledLook = await runnable.evaluate((node) => getComputedStyle(node).backgroundColor);
  for (const [id, command] of [
    ["pooler-strands-session-lock", "npm run dev -- --pgbouncer"],
    ["redis-restart-loses-lock", "npm run dev -- --redis"],
  ] as const) {
    const card = await openCard(page, id);
    await expect(card).toContainText(`start the lab with ${command}`);
    const button = card.getByRole("button", { name: "Run (not available here)" });
    await expect(button).toHaveAttribute("aria-disabled", "true");
    // It does not look like a button that would run: greyed, the cursor says no.
    expect(await button.evaluate((node) => getComputedStyle(node).cursor)).toBe("not-allowed");
    expect(await button.evaluate((node) => getComputedStyle(node).backgroundColor)).not.toBe(enabledLook);
    // Focusable but inert (Playwright will not click an aria-disabled button): Enter starts nothing.
    await button.focus();
    await page.keyboard.press("Enter");
    await expect(card.getByRole("progressbar")).toHaveCount(0);
    await expect(card.getByRole("status")).toHaveText("");
  }
  expect(await seriousViolations(page)).toEqual([]);
});

test("a run survives navigation, reopens at its URL with its prediction, and steps fact by fact; a bad import is refused", async ({
  page,
}) => {
  await page.goto("/learn");
  const card = await openCard(page, "advisory-not-enforced");
  await card.getByRole("radio").last().check();
  await runCard(page, "advisory-not-enforced");
  const { runId, run, href } = await savedRunOf(page, card);
  const verdict = run.verdict === "as-expected" ? "as expected" : "unexpected";

  // Away and back: the card shows its last run again.
  await page.getByRole("link", { name: "Back to the lab" }).click();
  await expect(page).toHaveURL(/\/$/);
  await page.goBack();
  await expect(cardSummary(page.locator('section[data-experiment="advisory-not-enforced"]'))).toContainText(
    `last run ${verdict}`,
  );

  await page.goto(href);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("A second code path ignores the lease");
  await expect(page.locator(".prediction-verdict")).toContainText("You predicted “Nothing stops it");
  const slider = page.getByRole("slider", { name: "Moment" });
  await slider.focus();
  await page.keyboard.press("Home");
  await expect(page.locator(".tl-mark")).toHaveCount(0);
  await expect(page.locator(".replay-fact")).toHaveText(`Before fact 1 of ${run.steps.length}`);
  const leaseRow = page.locator(".replay-state dt", { hasText: "Lease row" }).locator("xpath=following-sibling::dd[1]");
  // Free before the first request: as the variant's first read says, when its stamp (the app's clock) is before the
  // first lane's (the database's); from the lanes when not (seen once from a clean clone).
  await expect(leaseRow).toHaveText(/^free( \(as read before the first request\))?$/);
  const next = page.getByRole("button", { name: "Next fact", exact: true });
  for (const [index, step] of run.steps.entries()) {
    await next.click();
    await expect(page.locator('ol.run-steps > li[aria-current="step"]')).toHaveText(step.text);
    await expect(page.locator(".replay-fact")).toHaveText(`Fact ${index + 1} of ${run.steps.length}`);
  }
  await expect(next).toBeDisabled();
  // At the last fact (the audit read as the run ended), the state panel shows that audit.
  await expect(page.locator(".replay-state")).toContainText(/Audit \(as read at/);
  await expect(page.locator(".tl-mark")).toHaveCount(run.steps.length);
  // The slider still scrubs every moment; at each moment the run read the lease row, the panel says what it read.
  const min = Number(await slider.getAttribute("min"));
  for (const snapshot of run.snapshots.filter((each: { at: string }) => Date.parse(each.at) >= min)) {
    await slider.fill(String(Date.parse(snapshot.at)));
    const text = (await leaseRow.textContent())!;
    expect(text.startsWith(snapshot.lease?.held ? "held" : "free"), `${snapshot.at}: ${text}`).toBe(true);
  }
  // Between reads, the lanes say who held it: the switch, from its acquisition on.
  const switched = run.lanes.find((lane: { lease: unknown }) => lane.lease);
  await slider.fill(String(Date.parse(switched.lease.acquiredAt) + 1));
  await expect(leaseRow).toHaveText(/^held by switch under the lease, fence 1/);
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
