/**
 * The global fetch without Next.js's data cache. Next.js wraps the global fetch in its server with a cache
 * lookup and a cache lock per call, on the app's event loop: calls to the provider are never cached, and
 * those steps delayed and serialised concurrent switches' calls. Outside Next.js it is the global fetch.
 */
export const plainFetch: typeof fetch = (input, init) => {
  const global = globalThis.fetch as typeof fetch & { _nextOriginalFetch?: typeof fetch };
  return (global._nextOriginalFetch ?? global)(input, init);
};
