/**
 * Empty on purpose: without a file of its own by this name, Turbopack (its root the repository) builds the
 * repository's instrumentation.ts into this fixture, and the product's start-up would run in a floor
 * (bench/fixture-own-code.ts refuses such a build).
 */
export function register(): void {}
