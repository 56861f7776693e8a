import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        // Pure functions: no database, no build, no app.
        test: {
          name: "unit",
          include: ["lib/**/*.test.ts", "components/**/*.test.ts"],
          exclude: ["lib/**/*.pg.test.ts"],
        },
      },
      {
        // Real PostgreSQL and the built app over real HTTP, started once by the global set-up.
        test: {
          name: "integration",
          include: ["lib/**/*.pg.test.ts", "test/**/*.test.ts"],
          globalSetup: ["test/global-setup.ts"],
          // The files share one database and one app instance; run them one after another.
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
