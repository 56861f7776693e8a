import { expect, test, type Page } from "@playwright/test";
import { startPeer } from "../test/harness/app-server";
import {
  identityRow,
  labDatabaseUrl,
  openLabControls,
  overlappingSwitchesProvider,
  readLab,
  resetLab,
  sendTogether,
  seriousViolations,
  signInAs,
  switchRequests,
} from "./lab";

test.beforeEach(async ({ request }) => {
  await resetLab(request);
});

const lanes = (page: Page) => page.locator("svg g[data-operation-id]");
const laneIds = async (page: Page) =>
  (await lanes(page).evaluateAll((all) => all.map((lane) => lane.getAttribute("data-operation-id")))).sort();

test("a double click shows two lanes that overlap in time, one refused at acquisition", async ({ page, request }) => {
  await signInAs(page, "Ada Lovelace");
  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).dblclick();
  await expect(identityRow(page, "github|8812").getByText("Switched: now primary")).toBeVisible();
  await expect(lanes(page)).toHaveCount(2);

  const { operations } = await readLab(request, "/api/lab/timeline?userId=ada");
  const [first, second] = operations;
  expect(Date.parse(second.requestedAt)).toBeLessThan(Date.parse(first.answeredAt));
  const refused = operations.find((lane: { status: number }) => lane.status === 409);
  expect(refused.phases.map((phase: { outcome: string }) => phase.outcome)).toEqual(["refused"]);
  const refusedLane = page.locator(`g[data-operation-id="${refused.operationId}"]`);
  await expect(refusedLane).toContainText(`${refused.operationId.slice(0, 8)} → github|8812 · lease · 409`);
  await expect(refusedLane.locator("rect.tl-acquire.failed")).toHaveCount(1);
  // The refusal is narrated, naming the holder.
  await expect(page.getByText(new RegExp(`^Operation ${refused.operationId.slice(0, 8)} refused at`))).toBeVisible();
});

test("two tabs of one user show the same lanes live, within a second of each other", async ({ context }) => {
  const first = await context.newPage();
  const second = await context.newPage();
  await signInAs(first, "Ada Lovelace");
  await second.goto("/");
  await expect(second.getByText(/^Live/)).toBeVisible();
  await expect(first.getByText(/^Live/)).toBeVisible();
  // Everything the second tab reads on loading has been read.
  await expect(second.getByTestId("audit-verdict")).toBeVisible();
  await expect(second.getByRole("heading", { name: "Ada Lovelace's identities" })).toBeVisible();
  await expect(second.getByText(/^Nothing yet: refusals/)).toBeVisible();
  await expect(second.getByText("No calls yet.")).toBeVisible();
  const sent: string[] = [];
  second.on("request", (request) => sent.push(new URL(request.url()).pathname));

  await first.getByRole("button", { name: "Make primary for GitHub · @ada" }).click();
  await expect(lanes(first)).toHaveCount(1);
  await expect(lanes(second)).toHaveCount(1, { timeout: 1_000 });
  await expect(identityRow(first, "github|8812").getByText("Switched: now primary")).toBeVisible();
  await expect(identityRow(second, "github|8812").getByText("Primary", { exact: true })).toBeVisible({
    timeout: 1_000,
  });
  expect(await laneIds(second)).toEqual(await laneIds(first));
  // The answer announced by the stream made the tab read the user and the provider's accounts once, and the lease's
  // messages who holds what; no polling.
  expect(sent.filter((path) => path !== "/api/lab/holders").sort()).toEqual(["/api/lab/provider", "/api/users/ada"]);
  expect(sent).toContain("/api/lab/holders");
});

test("at rest, the page sends no requests", async ({ page }) => {
  await page.clock.install();
  await signInAs(page, "Ada Lovelace");
  await expect(page.getByText(/^Live/)).toBeVisible();
  const sent: string[] = [];
  page.on("request", (request) => sent.push(request.url()));
  await page.clock.runFor(30_000);
  expect(sent).toEqual([]);
});

test("a change made after the page read its lists but before its stream joined is shown once the stream's snapshot ends", async ({
  context,
  page,
  request,
}) => {
  await resetLab(request, { faults: { releaseFailures: 1 } });
  // Another tab watches all along: the instance's notifications stay on, so its stream has no moment unwatched
  // to start over from (which would have the page read again anyway).
  const watcher = await context.newPage();
  await watcher.goto("/");
  await expect(watcher.getByText(/^Live/)).toBeVisible();
  // The stream is held until the change is made: the page's own reads come first, as they may on any load.
  let joinStream = () => {};
  const streamHeld = new Promise<void>((resolve) => (joinStream = resolve));
  await page.route("**/api/lab/stream", async (route) => {
    await streamHeld;
    await route.continue();
  });
  await signInAs(page, "Ada Lovelace");
  await expect(page.getByText(/^Nothing yet: refusals/)).toBeVisible();
  await expect(page.getByText("Connecting…")).toBeVisible();

  // A switch whose release fails once: an event, which no notification can bring to a stream not yet there.
  const answer = await page.request.post("/api/users/ada/primary", { data: { identityId: "github|8812" } });
  expect(answer.status()).toBe(200);
  joinStream();

  await expect(page.getByText(/^Live/)).toBeVisible();
  await expect(page.getByRole("list", { name: "Events, oldest first" })).toContainText("Release failed");
  await expect(identityRow(page, "github|8812").getByText("Primary", { exact: true })).toBeVisible();
});

test("lanes streamed while the page's first read of the timeline is on its way are on the timeline when it lands", async ({
  page,
}) => {
  // The page's read of the timeline is made at once (before any switch) and its answer held until the switches are
  // over: every message of a double click's two lanes, the refusal's few and the switch's, comes first.
  let landTimeline = () => {};
  const timelineHeld = new Promise<void>((resolve) => (landTimeline = resolve));
  await page.route("**/api/lab/timeline?*", async (route) => {
    const response = await route.fetch();
    await timelineHeld;
    await route.fulfill({ response });
  });
  await signInAs(page, "Ada Lovelace");
  await expect(page.getByText(/^Live/)).toBeVisible();
  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).dblclick();
  await expect(identityRow(page, "github|8812").getByText("Switched: now primary")).toBeVisible();
  await expect(identityRow(page, "github|8812").locator(".outcome.conflict")).toBeVisible();
  landTimeline();

  await expect(lanes(page)).toHaveCount(2);
});

test("a switch run on a second app instance appears in a tab served by the first", async ({ page }) => {
  const peer = await startPeer(labDatabaseUrl());
  try {
    await signInAs(page, "Ada Lovelace");
    await expect(page.getByText(/^Live/)).toBeVisible();
    const signIn = await fetch(`${peer.baseUrl}/api/session`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ userId: "ada" }),
    });
    const cookie = signIn.headers.getSetCookie()[0]!.split(";")[0]!;
    const answer = await fetch(`${peer.baseUrl}/api/users/ada/primary`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Cookie: cookie },
      body: JSON.stringify({ identityId: "github|8812" }),
    });
    const { operationId } = await answer.json();
    const lane = page.locator(`g[data-operation-id="${operationId}"]`);
    await expect(lane).toContainText("· 200");
    await expect(identityRow(page, "github|8812").getByText("Primary", { exact: true })).toBeVisible();
  } finally {
    await peer.stop();
  }
});

test("no serious or critical accessibility violation: at rest, during a switch, after a corruption, lab open", async ({
  page,
  request,
}) => {
  // Four axe analyses of a live page and two overlapping switches of about 6.5 s: 36 s alone on a 2-core AMD EPYC,
  // and past a minute there beside the other browser tests (a clean clone's npm test at 30bffdd).
  test.setTimeout(120_000);
  await signInAs(page, "Ada Lovelace");
  await expect(page.getByText(/^Live/)).toBeVisible();
  expect(await seriousViolations(page)).toEqual([]);

  await request.put("/api/lab", { data: { provider: { latencyMs: 1_500 } } });
  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).click();
  await expect(page.getByText(/^Lease held by operation/)).toBeVisible();
  expect(await seriousViolations(page)).toEqual([]);
  await expect(identityRow(page, "github|8812").getByText("Switched: now primary")).toBeVisible();

  await request.put("/api/lab", { data: { strategy: "none", provider: overlappingSwitchesProvider } });
  await expect(page.getByText(/^Strategy none\./)).toBeVisible();
  await sendTogether(page, switchRequests, 2);
  await page.getByRole("button", { name: "Make primary for Email · ada@analytical.test" }).click();
  await page.getByRole("button", { name: "Make primary for Apple · ada@icloud.test" }).click();
  // Both switches' calls (about 6.5 s each), then the audit's settling margin.
  await expect(page.getByTestId("audit-verdict")).toHaveText(/^Inconsistent/, { timeout: 25_000 });
  await expect(page.getByText(/the audit tells what the provider is left with/)).toBeVisible();
  expect(await seriousViolations(page)).toEqual([]);

  await openLabControls(page);
  expect(await seriousViolations(page)).toEqual([]);
});

test("at 390 px nothing scrolls sideways and form text is at least 16 px", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signInAs(page, "Ada Lovelace");
  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).dblclick();
  await expect(lanes(page)).toHaveCount(2);
  await openLabControls(page);
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  expect(scrollWidth).toBe(innerWidth);
  const fontSizes = await page
    .locator("input, select, textarea")
    .evaluateAll((fields) => fields.map((field) => parseFloat(getComputedStyle(field).fontSize)));
  expect(fontSizes.length).toBeGreaterThan(0);
  expect(Math.min(...fontSizes)).toBeGreaterThanOrEqual(16);
});
