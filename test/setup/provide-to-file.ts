import { inject } from "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** The database of the running test file (`test/setup/file-database.ts`). */
    databaseUrl: string;
    /** The app of the running test file, on its database (`test/setup/file-app.ts`). */
    appUrl: string;
    /** One instance of that app: `appUrl` itself, or behind a balancer its first instance. */
    instanceUrl: string;
    /** Whether the file's pools may name their statements: not through a transaction pooler (`file-pooled.ts`). */
    namedStatements: boolean;
  }
}

type Provided = { databaseUrl: string; appUrl: string; instanceUrl: string; namedStatements: boolean };

/**
 * Makes `inject(key)` answer `value` for the rest of the running test file. `inject` reads the worker's copy
 * of what the global set-up provided, and vitest has no per-file `provide`: this writes into that copy, and
 * checks that `inject` sees it, so that a vitest upgrade that moves it fails here, loudly.
 */
export function provideToFile<Key extends keyof Provided>(key: Key, value: Provided[Key]): void {
  const worker = (globalThis as { __vitest_worker__?: { providedContext?: Record<string, unknown> } })
    .__vitest_worker__;
  if (worker?.providedContext) worker.providedContext[key] = value;
  if (inject(key) !== value) throw new Error(`inject("${key}") cannot be set per file with this vitest`);
}
