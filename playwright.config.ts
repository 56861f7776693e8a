import { defineConfig, devices } from "@playwright/test";
import { existsSync } from "node:fs";

export const e2ePort = Number(process.env.E2E_APP_PORT ?? 3212);

// Playwright cannot download its own browser here; Debian's Chromium works when it is installed.
const systemChromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((candidate) => existsSync(candidate));

const chromium = {
  ...devices["Desktop Chrome"],
  launchOptions: systemChromium
    ? {
        executablePath: systemChromium,
        args: [
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--no-first-run",
          "--disable-quic",
        ],
      }
    : {},
};

const raceTests = /\/e2e\/races\/.*\.spec\.ts$/;

export default defineConfig({
  testDir: "e2e",
  globalSetup: "./e2e/global-setup.ts",
  // The tests share one app and one database, and reset the lab between them.
  workers: 1,
  fullyParallel: false,
  forbidOnly: true,
  retries: 0,
  timeout: 60_000,
  reporter: [["list"]],
  use: {
    baseURL: `http://127.0.0.1:${e2ePort}`,
    trace: "retain-on-failure",
  },
  projects: [
    {
      name: "chromium",
      testIgnore: raceTests,
      use: chromium,
    },
    // The lab's races (e2e/races/), each run 10 times: a race that holds once proves little.
    { name: "races", testMatch: raceTests, repeatEach: 10, use: chromium },
  ],
});
