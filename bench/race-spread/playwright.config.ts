/**
 * `npm run bench:race`: the race kit on the lab, its sending modes side by side (race-spread.spec.ts). One
 * worker, one app, one browser: the trials must not compete with each other for the machine.
 */
import { defineConfig } from "@playwright/test";
import { chromium } from "../../e2e/chromium";
import { appPort } from "./settings";

export default defineConfig({
  testDir: ".",
  testMatch: /race-spread\.spec\.ts$/,
  outputDir: "../../test-results/race-spread",
  globalSetup: "./global-setup.ts",
  workers: 1,
  fullyParallel: false,
  forbidOnly: true,
  retries: 0,
  // Thirty browser contexts open, sign in and race on two cores.
  timeout: 300_000,
  expect: { timeout: 30_000 },
  reporter: [["line"]],
  use: { ...chromium, baseURL: `http://127.0.0.1:${appPort}`, trace: "off" },
});
