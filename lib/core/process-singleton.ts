/** Where every process-wide value lives: `globalThis`, under this prefix and its name. */
export const processSingletonPrefix = "__leaseLockLab";

/**
 * The value named `name` in this process, made by `create` the first time anyone asks for it.
 *
 * Some state must be one per process: the database pool, the LISTEN connection, the reconciler, the lab's
 * stream hub. A module-level `const` is not enough for that: Next.js evaluates a module once per bundle
 * (instrumentation, each route), and dev's hot reload evaluates a changed module again, so each of those
 * would make its own copy. So the value lives on `globalThis` under one name, which every bundle and every
 * reload of the module share. Call it where the value is first needed: at module load for state, inside a
 * function for what should be made only on use (a pool, a client). A `create` that throws stores nothing,
 * and the next call tries again.
 */
export function processSingleton<T extends object>(name: string, create: () => T): T {
  const slots = globalThis as unknown as Record<string, T | undefined>;
  return (slots[processSingletonPrefix + name] ??= create());
}
