import type { Locator } from "@playwright/test";

/**
 * Two clicks on one element in one task of the page. Playwright's own clicks happen one after the other,
 * never in parallel (microsoft/playwright#22339), `dblclick()` included, so the page may re-render between
 * them and a button that disables itself looks safe. Here nothing of the page runs between the two: a guard that
 * holds against this holds against any timing. Clicks from `element.click()`: the page sees
 * `isTrusted: false`.
 */
export async function doubleClick(locator: Locator): Promise<void> {
  await locator.scrollIntoViewIfNeeded();
  await locator.evaluate((element: HTMLElement) => {
    element.click();
    element.click();
  });
}
