import { expect, test, type Page } from "@playwright/test";
import { identityRow, openLabControls, readLab, resetLab, signInAs } from "./lab";

test.beforeEach(async ({ request }) => {
  await resetLab(request);
});

const lane = (page: Page) => page.locator("svg g[data-operation-id]");

test("a crash armed from the page stops the next switch dead: a crashed phase and no release", async ({
  page,
  request,
}) => {
  await request.put("/api/lab", { data: { provider: { latencyMs: 100 } } });
  await signInAs(page, "Ada Lovelace");
  await openLabControls(page);
  await page.getByLabel("Crash the next operation").selectOption({ label: "after the unlink" });
  await page.getByRole("button", { name: "Arm the crash" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Crash armed: after the unlink" })).toBeVisible();

  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).click();
  await expect(identityRow(page, "github|8812").getByRole("alert")).toHaveText(/^The operation crashed \(lab fault\)/);
  await expect(lane(page).locator("rect.tl-crashed.failed")).toHaveCount(1);
  await expect(lane(page).locator("rect.tl-release")).toHaveCount(0);
  const { operations } = await readLab(request, "/api/lab/timeline?userId=ada");
  expect(operations[0].phases.map((phase: { name: string }) => phase.name)).toEqual(["acquire", "unlink", "crashed"]);
  // One-shot: taken by this switch, so no longer armed.
  await expect(page.getByText(/^Crash armed/)).toBeHidden();
});

test("a link the provider applied after the caller gave up is marked applied-late on its bar", async ({
  page,
  request,
}) => {
  // The link hangs until the switch's deadline (the hold cap, 3 × TTL, less the margin): 5.6 s. With a TTL of 1 s
  // the switch once lost its lease before the link under a full e2e run's load, so no link was sent to be marked:
  // a renewal due every 0.33 s and more than 0.67 s late does that; at 2 s it may be 1.3 s late.
  await request.put("/api/lab", {
    data: { leaseTtlMs: 2_000, provider: { latencyMs: 100, script: { link: ["applied-late"] } } },
  });
  await signInAs(page, "Ada Lovelace");
  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).click();
  await expect(identityRow(page, "github|8812").getByRole("alert")).toHaveText(/deadline ran out during the link step/);
  // The provider logs the call when it finally answers, a few seconds after the caller gave up.
  const late = lane(page).locator("rect.tl-link.applied-late");
  await expect(late).toHaveCount(1, { timeout: 15_000 });
  await expect(late).toHaveAttribute(
    "aria-label",
    /Applied late: the provider carried it out after the caller gave up$/,
  );
  await expect(lane(page).locator("rect.tl-unlink.applied-late")).toHaveCount(0);
});

test("the lab panel switches lockColumnMapped, with its label", async ({ page, request }) => {
  await signInAs(page, "Ada Lovelace");
  await openLabControls(page);
  // Checked once the server has taken the change (the box shows the shared settings).
  await page.getByLabel("Lock column mapped").click();
  await expect(page.getByLabel("Lock column mapped")).toBeChecked();
  expect((await readLab(request, "/api/lab")).lockColumnMapped).toBe(true);
});

test("the identities panel renames the user, and says why a bad name is refused", async ({ page }) => {
  await signInAs(page, "Ada Lovelace");
  const name = page.getByLabel("Display name");
  await name.fill("Ada King");
  await name.press("Enter");
  await expect(page.getByRole("heading", { name: "Ada King's identities" })).toBeVisible();

  await name.fill("   ");
  await page.getByRole("button", { name: "Rename" }).click();
  await expect(page.getByRole("form", { name: "Rename" }).getByRole("alert")).toHaveText(/./);
  await expect(page.getByRole("heading", { name: "Ada King's identities" })).toBeVisible();
});
