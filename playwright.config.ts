import { defineConfig, devices } from "@playwright/test";
import { enterWorker } from "./e2e/workers";
import { findSystemChromium } from "./scripts/parts/system-parts";

// In a worker process: that worker's own app (and its database and ports, in process.env).
const worker = enterWorker();

// Playwright cannot download its own browser here; Debian's Chromium works when it is installed.
const systemChromium = findSystemChromium();

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
// `npm run test:e2e` runs each race 10 times: a race that holds once proves little. `npm test` runs each once
// (RACE_REPEATS=1), as it runs a sample of the model checker: ten times over is most of its time on 2 cores.
const raceRepeats = Number(process.env.RACE_REPEATS ?? 10);

export default defineConfig({
  testDir: "e2e",
  globalSetup: "./e2e/global-setup.ts",
  // Each worker has its own app and database (at most 4: the port pool's blocks); every test resets the lab
  // first, so tests run in any order on any worker. A file whose tests build on each other says so with
  // `test.describe.configure({ mode: "serial" })`.
  workers: Number(process.env.E2E_WORKERS ?? 3),
  fullyParallel: true,
  forbidOnly: true,
  retries: 0,
  timeout: 60_000,
  // A web-first assertion waits for its condition: on 2 cores running three apps, three browsers and their
  // databases, a switch's answer (three 800 ms provider calls) can take longer than Playwright's 5 s default.
  expect: { timeout: 10_000 },
  reporter: [["list"]],
  use: {
    baseURL: worker?.baseUrl,
    trace: "retain-on-failure",
  },
  projects: [
    {
      name: "chromium",
      testIgnore: raceTests,
      use: chromium,
    },
    // The lab's races (e2e/races/), each run `raceRepeats` times.
    { name: "races", testMatch: raceTests, repeatEach: raceRepeats, use: chromium },
  ],
});
