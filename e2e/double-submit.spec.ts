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
