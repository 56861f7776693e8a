import { expect, test } from "@playwright/test";
import { identityRow, resetLab, signInAs } from "./lab";

test.beforeEach(async ({ request }) => {
  await resetLab(request);
});

test("a double click on Make primary sends two requests: one switch, one visible 409, audit green", async ({
  page,
}) => {
  await signInAs(page, "Ada Lovelace");
  const sent: string[] = [];
  page.on("request", (request) => {
    if (request.method() === "POST" && request.url().endsWith("/api/users/ada/primary")) sent.push(request.url());
  });

  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).dblclick();

  const row = identityRow(page, "github|8812");
  await expect(row.getByRole("alert")).toHaveText("Another operation is already in progress");
  await expect(row.getByText("Switched: now primary")).toBeVisible();
  await expect(row.getByText("Primary", { exact: true })).toBeVisible();
  expect(sent).toHaveLength(2);
  await expect(page.getByTestId("audit-verdict")).toHaveText(/^Consistent/);
});

test("two tabs of one user: one switch wins, the other tab shows the conflict and then the new primary", async ({
  context,
  request,
}) => {
  // Slow provider calls: the second tab's click lands while the first's switch holds the lease, however
  // loaded the machine is.
  await resetLab(request, { provider: { latencyMs: 4_000, endpoints: { get: { latencyMs: 20 } } } });
  const first = await context.newPage();
  const second = await context.newPage();
  await signInAs(first, "Ada Lovelace");
  await second.goto("/");
  await expect(second.getByRole("heading", { name: "Ada Lovelace's identities" })).toBeVisible();

  await first.getByRole("button", { name: "Make primary for GitHub · @ada" }).click();
  await expect(identityRow(first, "github|8812").getByText(/^Switching…/)).toBeVisible();
  // The second tab sees the lease taken (the first request has reached the app) before it clicks.
  await expect(second.getByText(/^Lease held by operation/)).toBeVisible();
  await second.getByRole("button", { name: "Make primary for Email · ada@analytical.test" }).click();

  await expect(identityRow(second, "auth0|ada-email").getByRole("alert")).toHaveText(
    "Another operation is already in progress",
  );
  await expect(identityRow(first, "github|8812").getByText("Switched: now primary")).toBeVisible({ timeout: 25_000 });
  // The losing tab learns the outcome by itself once the winner's operation ends.
  await expect(identityRow(second, "github|8812").getByText("Primary", { exact: true })).toBeVisible();
  await expect(second.getByText(/^Lease free/)).toBeVisible();
  await expect(second.getByTestId("audit-verdict")).toHaveText(/^Consistent/);
});
