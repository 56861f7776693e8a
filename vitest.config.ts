import path from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// The lease library and the switch on PostgreSQL alone (`npm run test:lease`): no build, no app.
const leaseFiles = ["lib/lease/**/*.pg.test.ts", "lib/switch/**/*.pg.test.ts"];
const modelFiles = ["test/model-check*.test.ts"];
// Across real promotions (`npm run test:failover`): its own PostgreSQL 15 pair, its files one after another.
const failoverFiles = ["test/failover/**/*.test.ts"];
// The lease's tests over HTTP, and the other strategies', run again in the production shape
// (`npm run test:production`).
const productionFiles = [
  "test/switch-primary.test.ts",
  "test/strategies.test.ts",
  "test/lease-safeguards.test.ts",
  "test/unknown-outcome.test.ts",
  "test/idempotency.test.ts",
  "test/stream.test.ts",
  "test/running-lanes.test.ts",
  "test/audit-settling.test.ts",
  "test/provider-chaos.test.ts",
  "test/settings-everywhere.test.ts",
];

// The product imports the lease by its package name (tsconfig.json's paths): here too, from its source.
const leaseSource = path.join(import.meta.dirname, "lib/lease");
const resolve = {
  alias: [
    { find: /^@lease-lock-lab\/lease$/, replacement: path.join(leaseSource, "index.ts") },
    { find: /^@lease-lock-lab\/lease\/(.*)$/, replacement: path.join(leaseSource, "$1.ts") },
  ],
};

// Each file gets a fresh database of its own, and a file that talks to the app gets an app of its own on it,
// on its worker's ports: files run side by side. A file that must share state with another says so.
const onPostgres = {
  globalSetup: ["test/global-setup.ts"],
  setupFiles: ["test/setup/file-database.ts"],
  // Generous: a test that starts apps of its own waits for each to boot, slower while other files run beside it.
  testTimeout: 120_000,
  hookTimeout: 120_000,
};
const onTheApp = { ...onPostgres, setupFiles: [...onPostgres.setupFiles, "test/setup/file-app.ts"] };

/**
 * A project that runs files another project runs too, in another shape set up by `setupFile` (after the
 * file's database), with databases named apart (`<file>-<name>`).
 */
const inAnotherShape = (name: string, include: string[], setupFile: string) => ({
  resolve,
  test: {
    name,
    include,
    ...onPostgres,
    setupFiles: [...onPostgres.setupFiles, setupFile],
    env: { TEST_DATABASE_SUFFIX: name },
  },
});

/**
 * Vitest's order (the longest first, by the last run's durations), except that the model checker's files come
 * first: vitest orders projects by name, which would start them, the longest, after every integration file.
 */
class ModelFirst extends BaseSequencer {
  async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return [...sorted.filter(isModel), ...sorted.filter((file) => !isModel(file))];
  }
}
const isModel = (file: TestSpecification) => file.project.name === "model";

export default defineConfig({
  test: {
    sequence: { sequencer: ModelFirst },
    // The suite waits on TTLs, latencies and the app far more than it computes: more workers than cores pay.
    // At most 4: the port pool (test/harness/ports.ts) has a block for each of 4 workers.
    maxWorkers: 4,
    projects: [
      {
        // Pure functions: no database, no build, no app.
        resolve,
        test: {
          name: "unit",
          include: [
            "lib/**/*.test.ts",
            "components/**/*.test.ts",
            "scripts/**/*.test.ts",
            "docs/**/*.test.ts",
            "bench/**/*.test.ts",
          ],
          exclude: ["lib/**/*.pg.test.ts"],
        },
      },
      { resolve, test: { name: "lease", include: leaseFiles, ...onPostgres } },
      // The same files with every pool going through PgBouncer in transaction pooling (`pgbouncer` installed).
      inAnotherShape("lease-pooled", leaseFiles, "test/setup/file-pooled.ts"),
      {
        // The built app over real HTTP (`npm run build` first), and any other database test of `lib/`.
        resolve,
        test: {
          name: "integration",
          include: ["test/**/*.test.ts", "lib/**/*.pg.test.ts"],
          exclude: [...leaseFiles, ...modelFiles, ...failoverFiles],
          ...onTheApp,
        },
      },
      { resolve, test: { name: "model", include: modelFiles, ...onTheApp } },
      {
        resolve,
        // The lease's suite and the failover tier's files on a primary with a synchronous standby, each file
        // after a promotion (`postgresql-15` installed; the apps' files need `npm run build`).
        test: {
          name: "failover",
          include: [...leaseFiles, ...failoverFiles],
          globalSetup: ["test/failover/global-setup.ts"],
          setupFiles: ["test/failover/file-cluster.ts", "test/setup/file-database.ts"],
          env: { TEST_DATABASE_SUFFIX: "failover" },
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
      // Two instances behind HAProxy, both through PgBouncer (`pgbouncer` and `haproxy` installed).
      inAnotherShape("production", productionFiles, "test/setup/file-app-production.ts"),
    ],
  },
});
