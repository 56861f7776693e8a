/**
 * Refuses a path with bad percent-encoding before Next.js decodes it into a route's parameters, which
 * fails with a bare 500 before any route code runs. Only a path with a `%` can be malformed that way, so
 * only those come through here: the proxy costs every request it matches 1–2 ms of the event loop
 * (bench/README), and every other check runs in `respond`, which every route answers through.
 */
import { NextResponse, type NextRequest } from "next/server";
import { problemResponse, requestProblem } from "./lib/web/http";

export const config = { matcher: "/api/:path(.*%.*)" };

export function proxy(request: NextRequest): Response {
  const problem = requestProblem(request);
  return problem ? problemResponse(problem) : NextResponse.next();
}
