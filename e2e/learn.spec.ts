import { expect, test } from "@playwright/test";
import { resetLab } from "./lab";

test.beforeEach(async ({ request }) => {
  await resetLab(request);
});

test("the Learn view runs two experiments and shows their timelines and explanations", async ({ page }) => {
  await page.goto("/");
  await page.getByRole("link", { name: /^Learn/ }).click();
  await expect(page.getByRole("heading", { name: "Learn", level: 1 })).toBeVisible();

  for (const [id, explanation] of [
    ["f2-lease-stolen", /took it over/],
    ["advisory-not-enforced", /never asked for it/],
  ] as const) {
    const card = page.locator(`section[data-experiment="${id}"]`);
    await card.getByRole("button", { name: "Run" }).click();
    await expect(card.getByText("Verdict: as expected")).toBeVisible({ timeout: 30_000 });
    await expect(card.getByRole("img", { name: /^Timeline of the run: \d+ operations/ })).toBeVisible();
    await expect(card.locator(".explanation")).toHaveText(explanation);
  }
});
