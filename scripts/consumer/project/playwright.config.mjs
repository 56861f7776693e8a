import { defineConfig, devices } from "@playwright/test";

const baseURL = `http://127.0.0.1:${process.env.PORT}`;
export default defineConfig({
  testMatch: /\.spec\.mjs$/,
  workers: 1,
  reporter: "line",
  use: {
    ...devices["Desktop Chrome"],
    baseURL,
    launchOptions: process.env.CHROMIUM_PATH ? { executablePath: process.env.CHROMIUM_PATH } : {},
  },
  webServer: { command: "node app.mjs", url: `${baseURL}/claims`, reuseExistingServer: false },
});
