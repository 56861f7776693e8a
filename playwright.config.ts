import { defineConfig, devices } from "@playwright/test";
import { existsSync } from "node:fs";

export const e2ePort = Number(process.env.E2E_APP_PORT ?? 3212);

// Playwright cannot download its own browser here; Debian's Chromium works when it is installed.
const systemChromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((candidate) => existsSync(candidate));

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
      use: {
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
      },
    },
  ],
});
