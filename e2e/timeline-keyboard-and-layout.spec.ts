import { expect, test, type Page } from "@playwright/test";
import {
  classroomViewports,
  expectNoSidewaysScroll,
  identityRow,
  openLabControls,
  readLab,
  resetLab,
  seriousViolations,
  signInAs,
} from "./lab";

const chart = (page: Page) => page.getByRole("group", { name: /^Operations over time/ });
const detail = (page: Page) => page.locator(".timeline-detail");

/**
 * A burst of `count` concurrent switches for Ada, all to GitHub; its answer's counts. Not to random targets:
 * a switch to the primary itself answers "unchanged" without a provider call, and on a loaded machine a
 * request of the burst that arrives after it takes the lease too (seen: 2 × 200 at a load average of 60).
 */
async function burst(page: Page, count: number): Promise<Record<string, number>> {
  const answer = await page.request.post("/api/lab/burst", {
    data: { userId: "ada", count, identityId: "github|8812" },
  });
  expect(answer.status()).toBe(200);
  return (await answer.json()).counts;
}

for (const viewport of classroomViewports) {
  test.describe(`at ${viewport.width} px`, () => {
    test.use({ viewport });

    test.beforeEach(async ({ request }) => {
      await resetLab(request, { strategy: "lease", provider: { latencyMs: 300 } });
    });

    test("the timeline is one tab stop; arrow keys step through the phases and describe each", async ({ page }) => {
      await signInAs(page, "Ada Lovelace");
      await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).click();
      await expect(identityRow(page, "github|8812").getByText("Switched: now primary")).toBeVisible();
      await expect(page.locator("svg g[data-operation-id]")).toContainText("· 200");

      // Nothing inside the picture takes focus of its own: the chart is the only stop.
      const timeline = page.locator('section[aria-labelledby="timeline-heading"]');
      expect(await timeline.locator("svg [tabindex], svg a, svg button").count()).toBe(0);
      await page.getByRole("button", { name: "Pause" }).focus();
      await page.keyboard.press("Tab");
      await expect(chart(page)).toBeFocused();
      await expect(detail(page)).toHaveText(/^Operation [0-9a-f]{8}, acquire from 0\.\d{3} s to .*won/);

      await page.keyboard.press("ArrowRight");
      await expect(detail(page)).toHaveText(/^Operation [0-9a-f]{8}, unlink from .* \(\d+ ms\), 200/);
      await expect(page.locator("svg rect.tl-phase.focused.tl-unlink")).toHaveCount(1);
      await page.keyboard.press("End");
      await expect(detail(page)).toHaveText(/, release from .*released/);
      await page.keyboard.press("Home");
      await expect(detail(page)).toHaveText(/, acquire from /);
      // The description is what a screen reader hears with the chart.
      const describedBy = (await chart(page).getAttribute("aria-describedby"))!.split(" ");
      expect(describedBy).toContain(await detail(page).getAttribute("id"));

      // One more Tab leaves the timeline.
      await page.keyboard.press("Tab");
      expect(await timeline.evaluate((section) => section.contains(document.activeElement))).toBe(false);
    });

    test("after a burst, the refused requests share one lane (the API still has a lane each)", async ({ page }) => {
      await signInAs(page, "Ada Lovelace");
      const counts = await burst(page, 10);
      expect(counts["200"]).toBe(1);
      expect(counts["409"]).toBe(9);
      const { operations } = await readLab(page.request, "/api/lab/timeline?userId=ada");
      expect(operations).toHaveLength(10);

      const group = page.locator("svg g[data-refused-group]");
      await expect(group).toHaveCount(1);
      await expect(group).toHaveAttribute("data-refused-count", "9");
      await expect(group).toContainText(
        /^9 requests refused while [0-9a-f]{8} held the lease · 409 operation-in-progress/,
      );
      await expect(group.locator("rect.tl-acquire.failed")).toHaveCount(9);
      await expect(page.locator("svg g[data-operation-id]")).toHaveCount(1);
      // The holder named is the one that switched.
      const winner = operations.find((lane: { status: number }) => lane.status === 200);
      await expect(group).toHaveAttribute("data-refused-group", winner.operationId);
      await expectNoSidewaysScroll(page);
    });

    test("no page wider than the viewport, and no serious axe violation: signed out, signed in, after a burst, timeline focused", async ({
      page,
    }) => {
      // Four axe analyses, one of a timeline after a burst: 50 s alone on a 2-core AMD EPYC, and past a minute there
      // beside the other browser tests (a clean clone's npm test at 30bffdd).
      test.setTimeout(120_000);
      await page.goto("/");
      await expect(page.getByRole("button", { name: "Sign in as Ada Lovelace" })).toBeVisible();
      await expectNoSidewaysScroll(page);
      expect(await seriousViolations(page)).toEqual([]);

      await page.getByRole("button", { name: "Sign in as Ada Lovelace" }).click();
      await expect(page.getByText(/^Live/)).toBeVisible();
      await expect(page.getByText(/^No operations yet/)).toBeVisible();
      await expectNoSidewaysScroll(page);
      expect(await seriousViolations(page)).toEqual([]);

      await burst(page, 10);
      await expect(page.locator("svg g[data-refused-group]")).toHaveCount(1);
      await expect(page.getByTestId("audit-verdict")).toHaveText(/^Consistent/, { timeout: 15_000 });
      await expectNoSidewaysScroll(page);
      expect(await seriousViolations(page)).toEqual([]);

      await chart(page).focus();
      await page.keyboard.press("ArrowDown");
      await expect(detail(page)).toHaveText(/^Operation [0-9a-f]{8}, acquire .*refused/);
      expect(await seriousViolations(page)).toEqual([]);

      await openLabControls(page);
      await expectNoSidewaysScroll(page);
    });
  });
}

test.describe("the main page for a class", () => {
  test("at 390 px, Make primary, the timeline and the audit are within one screen", async ({ page, request }) => {
    await resetLab(request);
    await page.setViewportSize({ width: 390, height: 844 });
    await signInAs(page, "Ada Lovelace");
    await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).dblclick();
    await expect(page.locator("svg g[data-operation-id]")).toHaveCount(2);
    // Measured once settled: while it settles, the verdict's element is replaced as its words change. The
    // verdict from before the switch says Consistent too, until the first audit of the running switch replaces
    // it (its two calls take 1.6 s at the default latency, so that audit says Settling): waited for first, so
    // that the Consistent measured is the one after the switch.
    await expect(page.getByTestId("audit-verdict")).toHaveText(/^Settling/);
    await expect(page.getByTestId("audit-verdict")).toHaveText(/^Consistent/, { timeout: 20_000 });
    const box = async (locator: ReturnType<Page["locator"]>) => (await locator.boundingBox())!;
    const makePrimary = await box(page.getByRole("button", { name: /^Make primary for/ }).first());
    const timeline = await box(page.locator(".timeline-plot"));
    const audit = await box(page.getByTestId("audit-verdict"));
    // From the first Make primary to the end of whichever of the two comes last: one screen.
    const bottom = Math.max(timeline.y + timeline.height, audit.y + audit.height);
    expect(Math.min(timeline.y, audit.y)).toBeGreaterThan(makePrimary.y);
    expect(bottom - makePrimary.y).toBeLessThanOrEqual(844);
    // Each lane's caption is whole in the legend column, left of where its request starts: no bar or mark over it.
    for (const lane of await page.locator("svg g[data-operation-id]").all()) {
      const caption = await box(lane.locator("text.tl-label"));
      const request = await box(lane.locator("line.tl-request"));
      expect(caption.x + caption.width).toBeLessThanOrEqual(request.x);
    }
  });

  test("the pool gauge is in view under transaction, and folded away with the lab controls otherwise", async ({
    page,
    request,
  }) => {
    await resetLab(request, { strategy: "transaction" });
    await signInAs(page, "Ada Lovelace");
    await expect(page.getByRole("heading", { name: "Connection pool (this app instance)" })).toBeVisible();
    await expect(page.getByRole("img", { name: /connections in use/ })).toBeVisible();

    await request.put("/api/lab", { data: { strategy: "lease" } });
    await expect(page.getByRole("heading", { name: "Connection pool (this app instance)" })).toBeHidden();
    await openLabControls(page);
    await expect(page.getByRole("heading", { name: "Connection pool (this app instance)" })).toBeVisible();
  });
});
