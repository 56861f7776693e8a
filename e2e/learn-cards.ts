/** The Learn view's cards as the browser tests drive them: run one from the keyboard, read its saved run, check its picture. */
import { expect, type Page } from "@playwright/test";

/** Runs one card, keyboard focus on its button, and waits for its verdict in the card's live region. */
// Either verdict will do here: these tests are about the picture and the saved run; the verdicts are
// test/experiments.test.ts's (a loaded machine can delay an experiment's step, which its verdict says).
export async function runCard(page: Page, id: string, verdict = /^Verdict: (as expected|unexpected)$/) {
  const card = page.locator(`section[data-experiment="${id}"]`);
  const button = card.getByRole("button", { name: /^Run/ });
  await button.focus();
  await page.keyboard.press("Enter");
  await expect(card.getByRole("progressbar")).toBeVisible();
  await expect(button).toBeFocused();
  await expect(card.getByRole("status")).toHaveText(verdict, { timeout: 45_000 });
  await expect(button).toBeFocused();
  return card;
}

/** The saved run a card shows, read from the API through the card's link to it. */
export async function savedRunOf(page: Page, card: ReturnType<Page["locator"]>) {
  const href = await card.getByRole("link", { name: "Open this saved run on its own page" }).getAttribute("href");
  const runId = href!.split("/").at(-1)!;
  const answer = await page.request.get(`/api/lab/runs/${runId}`);
  expect(answer.status()).toBe(200);
  return { runId, run: await answer.json() };
}

/** Every variant of the run is a labelled group on the card's timeline, and every fact a marker on it. */
export async function expectWholeRun(page: Page, card: ReturnType<Page["locator"]>) {
  const { run } = await savedRunOf(page, card);
  expect(run.variants.length).toBeGreaterThan(0);
  for (const [index, variant] of run.variants.entries())
    await expect(
      card
        .locator(".tl-label", { hasText: `variant ${index + 1} of ${run.variants.length}, ${variant.label}` })
        .first(),
    ).toBeVisible();
  expect(run.steps.length).toBeGreaterThan(0);
  await expect(card.locator(".tl-mark")).toHaveCount(run.steps.length);
  await expect(card.locator("ol.run-steps > li")).toHaveCount(run.steps.length);
  // Every lane is drawn: as a lane of its own, or in the row of requests refused while one held the lease.
  const ownLanes = await card.locator("[data-operation-id]").count();
  const refused = await card
    .locator("[data-refused-group]")
    .evaluateAll((groups) => groups.reduce((sum, group) => sum + Number(group.getAttribute("data-refused-count")), 0));
  expect(ownLanes + refused).toBe(run.lanes.length);
}
