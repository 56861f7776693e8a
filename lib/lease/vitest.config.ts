import { defineConfig } from "vitest/config";

// The package's own tests, run from this folder (`npm test` here): on DATABASE_URL or an embedded PostgreSQL.
// The repository runs the same files in its `unit`, `lease` and `lease-pooled` projects instead.
export default defineConfig({
  test: {
    include: ["*.test.ts"],
    globalSetup: ["test-support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
