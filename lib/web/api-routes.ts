/**
 * Which methods each API path takes, as its route file under `app/api/` exports them (a test checks that
 * the two agree). The method guard answers every other method from this table, before Next.js sees it.
 */
export const apiRouteMethods: Readonly<Record<string, readonly string[]>> = {
  "/api/lab": ["GET", "PUT"],
  "/api/lab/audit": ["GET"],
  "/api/lab/burst": ["POST"],
  "/api/lab/events": ["GET"],
  "/api/lab/experiments": ["GET"],
  "/api/lab/experiments/[id]/run": ["POST"],
  "/api/lab/holders": ["GET"],
  "/api/lab/instances": ["GET"],
  "/api/lab/operations/[id]/spans": ["GET"],
  "/api/lab/pool": ["GET"],
  "/api/lab/presets": ["GET"],
  "/api/lab/provider": ["GET"],
  "/api/lab/reconcile": ["POST"],
  "/api/lab/relay/[peer]/users/[userId]/primary": ["POST"],
  "/api/lab/reset": ["POST"],
  "/api/lab/runs": ["POST"],
  "/api/lab/runs/[runId]": ["GET"],
  "/api/lab/stream": ["GET"],
  "/api/lab/support/users/[userId]/primary": ["POST"],
  "/api/lab/timeline": ["GET"],
  "/api/session": ["GET", "POST", "DELETE"],
  "/api/users": ["GET"],
  "/api/users/[userId]": ["GET", "PATCH"],
  "/api/users/[userId]/primary": ["POST"],
};

// A route's `[param]` segment matches any one segment, as Next.js matches it.
const routePatterns = Object.entries(apiRouteMethods).map(([route, methods]) => ({
  pattern: new RegExp(`^${route.replace(/\[[^\]]+\]/g, "[^/]+")}/?$`),
  methods,
}));

/**
 * The methods `pathname` takes, HEAD wherever GET is (Next.js answers HEAD with the GET handler), sorted
 * as an `Allow` header lists them; null when no API route has that path.
 */
export function allowedMethods(pathname: string): string[] | null {
  const route = routePatterns.find(({ pattern }) => pattern.test(pathname));
  if (!route) return null;
  return [...route.methods, ...(route.methods.includes("GET") ? ["HEAD"] : [])].sort();
}
