import AxeBuilder from "@axe-core/playwright";
import { expect, type APIRequestContext, type Page, type Route } from "@playwright/test";

/** The database of this worker's app, for a test that starts more instances on it (see e2e/workers.ts). */
export function labDatabaseUrl(): string {
  if (!process.env.DATABASE_URL) throw new Error("no DATABASE_URL: labDatabaseUrl() is for Playwright tests");
  return process.env.DATABASE_URL;
}

export async function resetLab(request: APIRequestContext, settings: Record<string, unknown> = {}): Promise<void> {
  expect((await request.post("/api/lab/reset")).status()).toBe(204);
  if (Object.keys(settings).length > 0) expect((await request.put("/api/lab", { data: settings })).status()).toBe(200);
}

export async function signInAs(page: Page, displayName: string): Promise<void> {
  await page.goto("/");
  await page.getByRole("button", { name: `Sign in as ${displayName}` }).click();
  await expect(page.getByRole("heading", { name: `${displayName}'s identities` })).toBeVisible();
}

/**
 * Holds the page's requests to `url` until `count` of them are sent, then lets them go together (later ones
 * go unheld): switches clicked one after the other in one page reach the app at once, however long a loaded
 * machine takes between the clicks (one click was seen to take 6 s on 2 cores). The race kit's barrier, for
 * one page (e2e/races/README.md).
 */
export async function sendTogether(page: Page, url: string, count: number): Promise<void> {
  const held: Route[] = [];
  await page.route(url, async (route) => {
    if (held.length === count) return route.fallback();
    held.push(route);
    if (held.length === count) await Promise.all(held.map((each) => each.continue()));
  });
}

/** The requests that switch a user's primary identity. */
export const switchRequests = "**/api/users/*/primary";

/**
 * Provider latencies under which two switches of Ada's, clicked one after the other under `none` and sent
 * together (`sendTogether`), corrupt the provider: the second reads the user before the first has saved and
 * unlinks its identity before the first links (a 6 s link, where requests let go together were seen to reach
 * the app up to 1.3 s apart), then links the old primary a second time, which the provider refuses (400). A
 * switch takes about 6.5 s, inside the 10 s TTL that bounds it.
 */
export const overlappingSwitchesProvider = {
  latencyMs: 500,
  endpoints: { get: { latencyMs: 20 }, link: { latencyMs: 6_000 } },
};

export const identityRow = (page: Page, identityId: string) => page.locator(`li[data-identity-id="${identityId}"]`);

/** Unfolds the lab's controls (folded away by default). */
export async function openLabControls(page: Page): Promise<void> {
  await page.locator("summary", { hasText: "Lab controls" }).click();
  await expect(page.getByLabel("How concurrent switches are kept apart")).toBeVisible();
}

/** Serious or critical accessibility violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`);
}

/** The page is no wider than the viewport: nothing scrolls sideways. */
export async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
}

/**
 * A read of the lab's JSON after a wait (a race, a settling audit): the test's connection may have been
 * idle about as long as the server keeps one open (5 s), and a reused socket the server just closed is reset
 * before the request is sent.
 */
export const readLab = async (request: APIRequestContext, path: string) =>
  (await request.get(path, { maxRetries: 1 })).json();

/** The screens a class uses: a laptop's and a phone's. */
export const classroomViewports = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
] as const;
