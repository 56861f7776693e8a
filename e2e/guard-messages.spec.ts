import { expect, test } from "@playwright/test";
import { identityRow, resetLab, sendTogether, signInAs, switchRequests } from "./lab";

test("the textbook lease with a pause longer than its TTL: the banner says the operation runs unprotected", async ({
  page,
  request,
}) => {
  // A TTL long enough that the page, however late its stream, shows the lease held before it expires.
  await resetLab(request, {
    leaseSafeguards: false,
    leaseTtlMs: 3_000,
    faults: { stall: { at: "acquired", ms: 6_000 } },
    provider: { latencyMs: 100 },
  });
  await signInAs(page, "Ada Lovelace");
  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).click();
  await expect(page.getByText(/^Lease held by operation [0-9a-f]{8} — expires in/)).toBeVisible();
  await expect(
    page.getByText(/^Lease expired \d+\.\d s ago; operation [0-9a-f]{8} is still running unprotected$/),
  ).toBeVisible();
  // Nothing stopped it: after the pause it finishes, with no lease at all.
  await expect(identityRow(page, "github|8812").getByText("Switched: now primary")).toBeVisible();
});

test("under transaction with one pooled connection, the page's own read waits and says it is stale", async ({
  page,
  request,
}) => {
  await resetLab(request, { strategy: "transaction", poolSize: 1, provider: { latencyMs: 1_500 } });
  await signInAs(page, "Ada Lovelace");
  // The two clicks' requests go together: one switch takes the only connection while the other waits for
  // it. When the first answers, the page reads the user again, and that read queues behind the second
  // switch's provider calls.
  await sendTogether(page, switchRequests, 2);
  await page.getByRole("button", { name: "Make primary for Email · ada@analytical.test" }).click();
  await page.getByRole("button", { name: "Make primary for Apple · ada@icloud.test" }).click();
  await expect(page.getByTestId("stale-notice")).toHaveText(
    /^Stale: the app's own read of this panel has waited \d+\.\d s for a pooled connection \(\d+ waiting, 1 of 1 in use\)\.$/,
  );
  await expect(page.getByTestId("stale-notice")).toBeHidden({ timeout: 10_000 });
});

test("under transaction, a failed link is rolled back locally but the provider's unlink stays", async ({
  page,
  request,
}) => {
  await resetLab(request, { strategy: "transaction", provider: { latencyMs: 200, script: { link: ["500"] } } });
  await signInAs(page, "Ada Lovelace");
  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).click();
  await expect(identityRow(page, "github|8812").getByRole("alert")).toHaveText(
    new RegExp(
      [
        /^The provider failed the link step \(HTTP 500\)\. .* /.source,
        /The transaction was rolled back, but the provider's unlink was not undone: /.source,
        /rolling back the database cannot undo a call to another system\.$/.source,
      ].join(""),
    ),
  );
  await expect(page.getByTestId("audit-verdict")).toHaveText(/^Inconsistent/);
});
