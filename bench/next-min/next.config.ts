import path from "node:path";
import type { NextConfig } from "next";

/** `next-min` of `npm run bench`: a minimal Next.js app, built as the product is, from the same packages. */
const root = path.join(import.meta.dirname, "..", "..");
const nextConfig: NextConfig = {
  serverExternalPackages: ["pg"],
  turbopack: { root },
  outputFileTracingRoot: root,
  // The repository's `npm run typecheck` checks this fixture with the rest.
  typescript: { ignoreBuildErrors: true },
  compress: false,
};

export default nextConfig;
