import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import { startApp, type RunningApp } from "../test/harness/app-server";
import { labDatabaseUrl, resetLab } from "./lab";

// Two more instances over the worker's database that know each other, as `npm start -- --instances 2` starts them.
const ports = [Number(process.env.PEER_APP_PORT ?? 3216), Number(process.env.RELAY_APP_PORT ?? 3220)] as const;
const urlOf = (port: number) => `http://127.0.0.1:${port}`;
let instances: RunningApp[] = [];

test.beforeAll(async () => {
  const databaseUrl = labDatabaseUrl();
  instances = await Promise.all(
    ports.map((port, index) =>
      startApp({
        databaseUrl,
        port,
        env: { APP_INSTANCE: `pair-${index + 1}`, LAB_PEER_URLS: urlOf(ports[1 - index]!) },
      }),
    ),
  );
});

test.afterAll(() => Promise.all(instances.map((instance) => instance.stop())));

test("the page names its instance and sends the next click to the other one, then back", async ({ page, request }) => {
  await resetLab(request);
  await page.goto(`${instances[0]!.baseUrl}/`);
  await page.getByRole("button", { name: "Sign in as Ada Lovelace" }).click();
  await expect(page.getByText(/^Live · served by instance pair-1$/)).toBeVisible();

  const picker = page.getByRole("group", { name: "Send the next click to" });
  await expect(picker.getByRole("radio", { name: "this instance (pair-1)" })).toBeChecked();
  await picker.getByRole("radio", { name: `the instance at ${urlOf(ports[1])}` }).check();
  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).click();
  await expect(page.locator("svg g[data-operation-id]")).toContainText("· 200 · instance pair-2");
  // One click only: the next goes to this instance again.
  await expect(picker.getByRole("radio", { name: "this instance (pair-1)" })).toBeChecked();
  await page.getByRole("button", { name: "Make primary for Email · ada@analytical.test" }).click();
  await expect(page.locator("svg g[data-operation-id]").nth(1)).toContainText("· 200 · instance pair-1");

  const { violations } = await new AxeBuilder({ page }).include(".identities-card").analyze();
  expect(violations.filter((violation) => ["serious", "critical"].includes(violation.impact ?? ""))).toEqual([]);
});
