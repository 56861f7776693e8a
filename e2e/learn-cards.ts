/**
 * The Learn view's cards and the course's lessons as the browser tests drive them: run one from the keyboard,
 * read its saved run, check its picture, step through its facts.
 */
import { expect, type Locator, type Page } from "@playwright/test";

/** A card's own summary: its title, question and last verdict (the card holds other summaries once it has run). */
export const cardSummary = (card: Locator) => card.locator(":scope > details > summary");

/** A card of `/learn`, unfolded (folded, it shows only its question and last verdict). */
export async function openCard(page: Page, id: string): Promise<Locator> {
  const card = page.locator(`section[data-experiment="${id}"]`);
  const details = card.locator(":scope > details");
  if ((await details.getAttribute("open")) === null) await cardSummary(card).click();
  await expect(details).toHaveAttribute("open", "");
  return card;
}

/**
 * Runs a card or a lesson (`container`), keyboard focus on its button, and waits for its verdict in its live
 * region. Either verdict will do here: these tests are about the picture and the saved run; the verdicts are
 * test/experiments.test.ts's (a loaded machine can delay an experiment's step, which its verdict says).
 */
export async function runIn(page: Page, container: Locator, verdict = /^Verdict: (as expected|unexpected)$/) {
  const button = container.getByRole("button", { name: /^Run/ });
  // A card whose part did not answer when the list was read is inert until the list, read again, says it does.
  await expect(button).toHaveAttribute("aria-disabled", "false");
  await button.focus();
  await page.keyboard.press("Enter");
  await expect(container.getByRole("progressbar")).toBeVisible();
  await expect(button).toBeFocused();
  await expect(container.getByRole("status")).toHaveText(verdict, { timeout: 45_000 });
  await expect(button).toBeFocused();
  return container;
}

/** Runs one card of `/learn` (unfolding it first). */
export const runCard = async (page: Page, id: string, verdict?: RegExp) =>
  runIn(page, await openCard(page, id), verdict);

/** The saved run a card or lesson shows, read from the API through its link to its own page. */
export async function savedRunOf(page: Page, container: Locator) {
  const href = await container.getByRole("link", { name: "Open this saved run on its own page" }).getAttribute("href");
  const runId = new URL(href!, "http://x").pathname.split("/").at(-1)!;
  const answer = await page.request.get(`/api/lab/runs/${runId}`);
  expect(answer.status()).toBe(200);
  return { runId, href: href!, run: await answer.json() };
}

interface Run {
  variants: { label: string }[];
  steps: { n: number; at: string; text: string; caption?: string }[];
  lanes: unknown[];
}

/**
 * Every variant of the run is a group on the picture under its caption, in order, each caption distinct, and
 * every fact a marker on it and an item of the list, once.
 */
export async function expectWholeRun(container: Locator, run: Run) {
  expect(run.variants.length).toBeGreaterThan(0);
  expect(new Set(run.variants.map((variant) => variant.label)).size).toBe(run.variants.length);
  const headers = container.locator(".tl-group");
  await expect(headers).toHaveCount(run.variants.length);
  for (const [index, variant] of run.variants.entries())
    await expect(headers.nth(index)).toHaveText(new RegExp(`^${index + 1} · ${escape(variant.label)}`));
  expect(run.steps.length).toBeGreaterThan(0);
  await expect(container.locator(".tl-mark")).toHaveCount(run.steps.length);
  await expect(container.locator("ol.run-steps > li")).toHaveCount(run.steps.length);
  // Every lane is drawn: as a lane of its own, or in a row it shares (refused while one held the lease, folded).
  const ownLanes = await container.locator("[data-operation-id]").count();
  const shared = await container
    .locator("[data-refused-count], [data-folded-count]")
    .evaluateAll((rows) =>
      rows.reduce(
        (sum, row) => sum + Number(row.getAttribute("data-refused-count") ?? row.getAttribute("data-folded-count")),
        0,
      ),
    );
  expect(ownLanes + shared).toBe(run.lanes.length);
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A fact's one-line caption as the picture draws it (cut with "…" when the plot is narrow). */
const drawnCaption = (step: Run["steps"][number]) =>
  step.caption ?? step.text.replace(/^[^:]*: /, "").replace(/ \([\d,]+ ms after it started\)$/, "");

/**
 * At fact `index`: the replay says so, its list item is the current step (the only one), its marker is the one
 * highlighted, its caption is drawn beside it, and every fact reached by then (facts at one moment are reached
 * together) is marked. Read in one go once the replay says it is there.
 */
async function expectAtFact(container: Locator, run: Run, index: number) {
  const step = run.steps[index]!;
  await expect(container.locator(".replay-fact")).toHaveText(`Fact ${index + 1} of ${run.steps.length}`);
  const drawn = await container.evaluate((node) => ({
    current: [...node.querySelectorAll('ol.run-steps > li[aria-current="step"]')].map((item) => item.textContent),
    mark: node.querySelector(".tl-mark.current")?.getAttribute("data-mark") ?? null,
    caption: node.querySelector(".tl-mark-caption text")?.textContent ?? "",
    marks: node.querySelectorAll(".tl-mark").length,
  }));
  const reached = run.steps.filter((each) => Date.parse(each.at) <= Date.parse(step.at)).length;
  expect(drawn).toMatchObject({ current: [step.text], mark: String(step.n), marks: reached });
  expect(drawn.caption.length).toBeGreaterThan(1);
  expect(drawnCaption(step).startsWith(drawn.caption.replace(/…$/, ""))).toBe(true);
}

/** From the last fact (where a replay opens) back to the first with "Previous fact", then forward to the last. */
export async function stepEveryFact(container: Locator, run: Run) {
  const previous = container.getByRole("button", { name: "Previous fact", exact: true });
  const next = container.getByRole("button", { name: "Next fact", exact: true });
  const last = run.steps.length - 1;
  await expectAtFact(container, run, last);
  await expect(next).toBeDisabled();
  for (let index = last - 1; index >= 0; index--) {
    await previous.click();
    await expectAtFact(container, run, index);
  }
  await expect(previous).toBeDisabled();
  for (let index = 1; index <= last; index++) {
    await next.click();
    await expectAtFact(container, run, index);
  }
}
