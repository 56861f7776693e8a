/**
 * `npm run screenshots` (after `npm run build`): starts the built app on a fresh database of its own, stages
 * a double click under `lease`, `none` and `transaction` in Chromium, runs two of Learn's experiments, and
 * saves each timeline and each card as a PNG into docs/screenshots/ (the pictures of docs/timeline.md and
 * docs/learn.md, and the README's).
 */
import { chromium, type Page } from "@playwright/test";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { prepareDatabase } from "../db/prepare";
import { startApp } from "../test/harness/app-server";
import { databaseFor } from "../test/harness/databases";
import { findSystemChromium } from "./parts/system-parts";

const outputDir = path.resolve(import.meta.dirname, "../docs/screenshots");
const port = Number(process.env.SCREENSHOTS_APP_PORT ?? 3222);
const systemChromium = findSystemChromium();

const databaseUrl = await prepareDatabase(databaseFor("screenshots"), { fresh: true });
// Named as `npm start` names a single instance, so the lanes read "instance 1".
const app = await startApp({ databaseUrl, port, env: { LAB_INSTANCE: "1" } });
const browser = await chromium.launch(systemChromium ? { executablePath: systemChromium } : {});
try {
  mkdirSync(outputDir, { recursive: true });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, baseURL: app.baseUrl });

  await stage(page, { strategy: "lease" });
  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).dblclick();
  await answered(page, 2);
  await verdict(page, /^Consistent/);
  await save(page, "lease-double-click.png");

  // Two switches of one user, to two identities, with nothing between them: the provider ends up split.
  // Slow calls, so that the second switch unlinks before the first links however long the clicks take.
  await stage(page, { strategy: "none", provider: { latencyMs: 2_000, endpoints: { get: { latencyMs: 20 } } } });
  await page.getByRole("button", { name: "Make primary for Email · ada@analytical.test" }).click();
  await page.getByRole("button", { name: "Make primary for Apple · ada@icloud.test" }).click();
  await answered(page, 2);
  await verdict(page, /^Inconsistent/);
  await save(page, "none-double-click.png");

  await stage(page, { strategy: "transaction" });
  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).dblclick();
  await answered(page, 2);
  await verdict(page, /^Consistent/);
  await save(page, "transaction-double-click.png");

  // Learn: a card after its run, its picture with the numbered facts, and the steps that cite them.
  await page.setViewportSize({ width: 1280, height: 1400 });
  for (const experiment of ["f2-lease-stolen", "f3-release-fails"]) await runCard(page, experiment);
} finally {
  await browser.close();
  await app.stop();
}

/** Runs one of Learn's cards and saves it, once its verdict is in and its saved run is drawn. */
async function runCard(page: Page, experiment: string): Promise<void> {
  await page.goto("/learn");
  const card = page.locator(`section[data-experiment="${experiment}"]`);
  await card.getByRole("button", { name: /^Run/ }).click();
  await card
    .getByRole("status")
    .getByText(/^Verdict: /)
    .waitFor({ timeout: 60_000 });
  await card.locator(".tl-mark").first().waitFor();
  await card.screenshot({ path: path.join(outputDir, `learn-${experiment}.png`), animations: "disabled" });
  console.log(`[screenshots] saved docs/screenshots/learn-${experiment}.png`);
}

/** A fresh lab with these settings, and the page signed in as Ada. */
async function stage(page: Page, settings: Record<string, unknown>): Promise<void> {
  if ((await page.request.post("/api/lab/reset")).status() !== 204) throw new Error("the lab reset failed");
  const configured = await page.request.put("/api/lab", { data: settings });
  if (configured.status() !== 200) throw new Error(`PUT /api/lab answered ${configured.status()}`);
  await page.goto("/");
  const signIn = page.getByRole("button", { name: "Sign in as Ada Lovelace" });
  const identities = page.getByRole("heading", { name: "Ada Lovelace's identities" });
  await signIn.or(identities).waitFor();
  if (await signIn.isVisible()) await signIn.click();
  await identities.waitFor();
  await page.getByText(/^Live/).waitFor();
}

/** Waits until the timeline shows `count` lanes, every one answered (its label ends with the answer). */
async function answered(page: Page, count: number): Promise<void> {
  await page.waitForFunction((expected) => {
    const labels = [...document.querySelectorAll("svg g[data-operation-id] .tl-label")];
    return labels.length === expected && labels.every((label) => !/· running/.test(label.textContent ?? ""));
  }, count);
}

/** The audit follows the answers by a moment (it is recomputed once things settle): waits for its verdict. */
async function verdict(page: Page, words: RegExp): Promise<void> {
  await page.getByTestId("audit-verdict").getByText(words).waitFor();
}

/** The timeline and the audit beside it: the story, without the rest of the page. */
async function save(page: Page, file: string): Promise<void> {
  await page.locator(".story-main").screenshot({ path: path.join(outputDir, file), animations: "disabled" });
  console.log(`[screenshots] saved docs/screenshots/${file}`);
}
