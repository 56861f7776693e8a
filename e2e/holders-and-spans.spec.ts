import { expect, test } from "@playwright/test";
import { startPeer } from "../test/harness/app-server";
import { appClient } from "../test/harness/http-client";
import { identityRow, labDatabaseUrl, resetLab, seriousViolations, signInAs } from "./lab";

const routeSpan = "POST /api/users/[userId]/primary";
/** The waterfall's rows of a switch under the lease, in order (Next.js's own spans between them left out). */
const switchRows = [
  routeSpan,
  "switch",
  "lease.acquire",
  "checkpoint before unlink",
  "provider.unlink",
  "checkpoint before link",
  "provider.link",
  "checkpoint before save",
  "lease.release",
];

test("who holds what lists Ada while her slow switch holds the lease, and nobody once it answered", async ({
  page,
  request,
}) => {
  await resetLab(request, { provider: { latencyMs: 1_500 } });
  await signInAs(page, "Ada Lovelace");
  const panel = page.getByRole("region", { name: "Who holds what" });
  await expect(panel.getByText("Nobody holds a lease.")).toBeVisible();
  await expect(panel.getByText(/^Read at \d\d:\d\d:\d\d\.\d{3} by the database's clock\.$/)).toBeVisible();

  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).click();
  const holder = panel.getByRole("row", { name: /^ada 1 / });
  await expect(holder).toBeVisible();
  await expect(panel.getByText("Nobody holds a lease.")).toHaveCount(0);
  await expect(identityRow(page, "github|8812").getByText("Switched: now primary")).toBeVisible();
  await expect(panel.getByText("Nobody holds a lease.")).toBeVisible();
  await expect(holder).toHaveCount(0);
});

test("picking a switch's lane shows its spans as a waterfall, in order; no serious accessibility violation", async ({
  page,
  request,
}) => {
  await resetLab(request, { provider: { latencyMs: 100 } });
  await signInAs(page, "Ada Lovelace");
  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).click();
  await expect(identityRow(page, "github|8812").getByText("Switched: now primary")).toBeVisible();

  await page.locator("svg g[data-operation-id] rect.tl-link").click();
  const waterfall = page.getByRole("region", { name: /^Spans of operation [0-9a-f]{8}$/ });
  const table = waterfall.getByRole("table", { name: /^Finished spans of operation/ });
  await expect(table).toBeVisible();
  const rowNames = async () =>
    (await table.getByRole("rowheader").allTextContents()).filter((name) => switchRows.includes(name));
  await expect.poll(rowNames).toEqual(switchRows);
  await expect(table.getByRole("row", { name: /^lease\.acquire \d+\.\d \d+\.\d won$/ })).toBeVisible();
  expect(await seriousViolations(page)).toEqual([]);
});

test("a switch another instance ran has no spans on this one, and the waterfall says so", async ({ page, request }) => {
  await resetLab(request, { provider: { latencyMs: 50 } });
  const peer = await startPeer(labDatabaseUrl());
  try {
    await signInAs(page, "Ada Lovelace");
    await expect(page.getByText(/^Live/)).toBeVisible();
    const ada = await appClient(peer.baseUrl).signedIn("ada");
    const answer = await ada.promote("ada", "github|8812");
    expect(answer.status).toBe(200);
    const lane = page.locator(`g[data-operation-id="${answer.body.operationId}"]`);
    await expect(lane).toContainText("· 200");
    await lane.locator("rect.tl-link").click();
    await expect(
      page.getByText("No spans recorded for this operation (on the app instance that answered)."),
    ).toBeVisible();
  } finally {
    await peer.stop();
  }
});
