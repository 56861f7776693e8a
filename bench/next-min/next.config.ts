import path from "node:path";
import type { NextConfig } from "next";

/**
 * The config of `npm run bench`'s fixture apps, `next-min` and `next-bare` (whose next.config.ts links to this
 * file): minimal Next.js apps, built as the product is, from the same packages.
 */
const root = path.join(import.meta.dirname, "..", "..");
const nextConfig: NextConfig = {
  serverExternalPackages: ["pg"],
  turbopack: { root },
  outputFileTracingRoot: root,
  // The repository's `npm run typecheck` checks the fixtures with the rest.
  typescript: { ignoreBuildErrors: true },
  compress: false,
};

export default nextConfig;
