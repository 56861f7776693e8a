export async function register(): Promise<void> {
  // The pg pool is Node-only; the edge runtime never calls the provider. (The simulated provider is a process
  // of its own: scripts/launch.ts and the tests start it.)
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { config } = await import("./lib/core/config");
  // Before anything that takes a tracer or a meter (the switch's composition root): a meter taken earlier stays a
  // no-op. Without an endpoint and without the lab the SDK is not even loaded. With the lab on, its memory of
  // finished spans (the waterfall's) is a span processor: beside the exporter's (which takes every span), or the
  // only one (which leaves the reads out: labSampler).
  const lab = config.labEnabled ? await import("./lib/lab/recent-spans") : null;
  const labSpans = lab ? [lab.labSpans()] : [];
  const exporting =
    config.exportsTelemetry && (await import("./lib/web/opentelemetry")).registerOpenTelemetry(labSpans);
  if (!exporting && lab) (await import("./lib/web/tracing")).registerTracing(labSpans, { sampler: lab.labSampler() });
  // Then: it refuses methods the API does not take, which Next.js would answer without Allow or with a
  // 500, and bodies that say they are too large, before Next.js reads anything.
  const { installRequestGuard } = await import("./lib/web/request-guard");
  installRequestGuard();
  if (!config.databaseUrl) return;
  if (!config.hearsNotifications)
    console.warn(
      "[app] DATABASE_POOLER=transaction without DATABASE_DIRECT_URL: LISTEN goes through the pooler " +
        "and hears nothing (the live stream, settings, the reconciler's wake-ups). " +
        "Set DATABASE_DIRECT_URL to the database itself.",
    );
  const [{ appDb }, { appIdentityProvider }, { startBackground }] = await Promise.all([
    import("./lib/core/db"),
    import("./lib/web/app-provider"),
    import("./lib/web/switch"),
  ]);
  // Through the composition root, like every route: the reconciler, and with the lab on, its settings.
  await startBackground(appDb(), appIdentityProvider);
}
