import { afterAll, expect, inject, it, vi } from "vitest";
import { createDb } from "../db/connection";
import { startPgBouncer, type RunningPgBouncer } from "../scripts/parts/pgbouncer";

let pgbouncer: RunningPgBouncer | undefined;
afterAll(() => pgbouncer?.stop());

it(
  "a process whose LISTEN goes through a transaction pooler, unsaid, " +
    "reads the settings per use instead of keeping a stale snapshot",
  async () => {
    const directUrl = inject("databaseUrl");
    pgbouncer = await startPgBouncer(directUrl, Number(process.env.PGBOUNCER_PORT ?? 3240));
    const pooledUrl = pgbouncer.pooledUrl(directUrl);
    // The process as a misconfigured provider or app would run: the pooler's URL, and nothing to say it is one.
    vi.stubEnv("DATABASE_URL", pooledUrl);
    vi.stubEnv("DATABASE_DIRECT_URL", "");
    vi.stubEnv("DATABASE_POOLER", "");
    vi.resetModules();
    const { hearLabSettings, labSettings } = await import("../lib/lab/settings-snapshot");
    const { updateLabSettings } = await import("../lib/lab/settings-store");
    const pooled = createDb(pooledUrl, 2, { namedStatements: false });
    const direct = createDb(directUrl, 1);
    let stopHearing = () => {};
    try {
      const caughtUp: number[] = [];
      stopHearing = hearLabSettings(pooled.db, (settings) => caughtUp.push(settings.leaseTtlMs));
      // The catch-up read, then a probe sent through the pool that the listener never hears (5 s).
      await expect.poll(() => caughtUp.length, { timeout: 20_000 }).toBe(1);

      // Another instance changes the settings; its announcement does not reach this process.
      await updateLabSettings(direct.db, { leaseTtlMs: 4_321 });
      expect((await labSettings(pooled.db)).leaseTtlMs).toBe(4_321);
    } finally {
      stopHearing();
      vi.unstubAllEnvs();
      await Promise.all([pooled.db.destroy(), direct.db.destroy()]);
    }
  },
);
