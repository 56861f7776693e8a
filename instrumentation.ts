export async function register(): Promise<void> {
  // MSW's interception is Node-only; the edge runtime never calls the provider.
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { config } = await import("./lib/config");
  if (!config.simulateProvider) return;
  const { startSimulatedProvider } = await import("./lib/provider-sim/server");
  startSimulatedProvider();
}
