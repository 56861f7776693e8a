import { expect, test } from "@playwright/test";
import {
  identityRow,
  openLabControls,
  overlappingSwitchesProvider,
  readLab,
  resetLab,
  sendTogether,
  signInAs,
  switchRequests,
} from "./lab";

test.beforeEach(async ({ request }) => {
  await resetLab(request);
});

test("with the strategy set to No lock, two quick clicks corrupt the provider and the audit names the cause", async ({
  page,
  request,
}) => {
  expect((await request.put("/api/lab", { data: { provider: overlappingSwitchesProvider } })).status()).toBe(200);
  await signInAs(page, "Ada Lovelace");
  await openLabControls(page);
  await page.getByLabel("How concurrent switches are kept apart").selectOption("none");
  await expect(page.getByText(/^Nothing keeps two switches apart/)).toBeVisible();

  await sendTogether(page, switchRequests, 2);
  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).click();
  await page.getByRole("button", { name: "Make primary for Email · ada@analytical.test" }).click();
  // Both have answered (about 6.5 s each): one switched, the other's link was refused.
  await expect(page.getByText("Switched: now primary")).toBeVisible({ timeout: 20_000 });
  await expect(page.getByText(/^The provider failed the link step \(HTTP 400\)/)).toBeVisible({ timeout: 20_000 });

  await expect(page.getByTestId("audit-verdict")).toHaveText(/^Inconsistent/);
  // The innermost list item: the finding itself, not the user around it.
  const finding = page
    .getByRole("listitem")
    .filter({ hasText: /is orphaned in its own account — caused by operation/ })
    .last();
  await expect(finding).toBeVisible();
  // The finding links to the operation's group of calls in the provider's log.
  const link = finding.getByRole("link").first();
  const target = (await link.getAttribute("href"))!.slice(1);
  await link.click();
  await expect(page).toHaveURL(new RegExp(`#${target}$`));
  await expect(page.locator(`[id="${target}"]`)).toContainText(
    target.slice("operation-".length, "operation-".length + 8),
  );
});

test("a switch whose link failed is finished by the next one, and the page says so", async ({ page, request }) => {
  await resetLab(request, { provider: { latencyMs: 100, script: { link: ["500"] } } });
  await signInAs(page, "Ada Lovelace");

  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).click();
  await expect(identityRow(page, "github|8812").getByRole("alert")).toHaveText(
    /^The provider failed the link step \(HTTP 500\)/,
  );
  // Half-done, its journal entry open: the audit shows the split as settling (a repair will come), not red.
  await expect(page.getByTestId("audit-verdict")).toHaveText(/^Settling/);
  await expect(page.getByText("github|8812 is orphaned in its own account")).toBeVisible();

  await page.getByRole("button", { name: "Make primary for Email · ada@analytical.test" }).click();
  await expect(identityRow(page, "auth0|ada-email").getByText("Switched: now primary")).toBeVisible();
  await expect(
    page.getByText(/^Recovered switch from google-oauth2\|104423 to github\|8812 left by operation/),
  ).toBeVisible();
  await expect(page.getByTestId("audit-verdict")).toHaveText(/^Consistent/);
});

test("a banner beside the audit names every setting that is not the default; Reset brings the defaults back", async ({
  page,
  request,
}) => {
  await signInAs(page, "Ada Lovelace");
  const banner = page.getByTestId("settings-banner");
  await expect(banner).toContainText("The lab runs its default settings.");

  // Changed elsewhere (another tab, an earlier class): the page says so without being asked.
  expect((await request.put("/api/lab", { data: { strategy: "none", leaseTtlMs: 1_000 } })).status()).toBe(200);
  await expect(banner).toContainText(
    "Not the lab's defaults: strategy none (default lease); leaseTtlMs 1000 (default 10000).",
  );

  await banner.getByRole("button", { name: "Reset the lab" }).click();
  await expect(banner).toContainText("The lab runs its default settings.");
  const settings = await readLab(request, "/api/lab");
  expect([settings.strategy, settings.leaseTtlMs]).toEqual(["lease", 10_000]);
});
