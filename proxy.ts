/**
 * Checks every API request before it reaches a route: a malformed path, a cross-site request that would
 * change state (CSRF) and a body that is not JSON are refused here, in one place, as problem+json.
 */
import { NextResponse, type NextRequest } from "next/server";
import { CrossSiteRequest, UnsupportedMediaType, ValidationProblem } from "./lib/core/problems";
import { ownOrigin, problemResponse } from "./lib/web/http";

export const config = { matcher: "/api/:path*" };

const stateChangingMethods = new Set(["POST", "PUT", "PATCH", "DELETE"]);

// A path parameter is named after the segment before it, as its route names it; others are "path".
const parameterAfter: Record<string, string> = { users: "userId" };

export function proxy(request: NextRequest): Response {
  const problem = stateChangingMethods.has(request.method)
    ? (crossSiteProblem(request) ?? pathProblem(request) ?? mediaTypeProblem(request))
    : pathProblem(request);
  return problem ? problemResponse(problem) : NextResponse.next();
}

/**
 * A browser names where a request comes from (`Origin`, `Sec-Fetch-Site`); another site's page may not
 * change state here. A request with neither header is not a browser's (a script, curl) and passes.
 */
function crossSiteProblem(request: NextRequest): CrossSiteRequest | null {
  const fetchSite = request.headers.get("sec-fetch-site");
  if (fetchSite === "cross-site" || fetchSite === "same-site")
    return new CrossSiteRequest(`Sec-Fetch-Site is ${fetchSite}`);
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== ownOrigin(request))
    return new CrossSiteRequest(`Origin ${origin} is not ${ownOrigin(request)}`);
  return null;
}

// Next.js would fail decoding such a segment into a route's parameter with a bare 500.
function pathProblem(request: NextRequest): ValidationProblem | null {
  const segments = new URL(request.url).pathname.split("/");
  const bad = segments.findIndex((segment) => !decodes(segment));
  if (bad < 0) return null;
  const field = parameterAfter[segments[bad - 1] ?? ""] ?? "path";
  return new ValidationProblem([{ field, message: `"${segments[bad]}" is not valid percent-encoding` }]);
}

function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

function mediaTypeProblem(request: NextRequest): UnsupportedMediaType | null {
  const length = request.headers.get("content-length");
  const hasBody = (length !== null && length !== "0") || request.headers.has("transfer-encoding");
  const contentType = request.headers.get("content-type");
  const mediaType = contentType?.split(";")[0]?.trim().toLowerCase();
  return hasBody && mediaType !== "application/json" ? new UnsupportedMediaType(contentType) : null;
}
