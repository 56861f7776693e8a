export async function register(): Promise<void> {
  // MSW's interception and the pg pool are Node-only; the edge runtime never calls the provider.
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { config } = await import("./lib/core/config");
  if (config.simulateProvider) {
    const { startSimulatedProvider } = await import("./lib/provider-sim/server");
    await startSimulatedProvider();
  }
  if (config.databaseUrl) {
    const [{ applyStoredPoolSize }, { appDb }] = await Promise.all([
      import("./lib/lab/settings"),
      import("./lib/core/db"),
    ]);
    await applyStoredPoolSize(appDb()).catch((error: unknown) =>
      console.error("[start-up] could not read the lab settings:", error),
    );
    const [{ startReconciler }, { appIdentityProvider }] = await Promise.all([
      import("./lib/lab/reconciler"),
      import("./lib/web/app-provider"),
    ]);
    startReconciler(appDb(), appIdentityProvider);
  }
}
