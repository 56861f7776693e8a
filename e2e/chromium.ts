import { devices } from "@playwright/test";
import { findSystemChromium } from "../scripts/parts/system-parts";

// Playwright cannot download its own browser here; Debian's Chromium works when it is installed.
const systemChromium = findSystemChromium();

/** The browser every Playwright project here runs: desktop Chrome's settings, on the system's Chromium if any. */
export const chromium = {
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
