import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { allowedMethods, apiRouteMethods } from "./api-routes";
import { guardProblem } from "./request-guard";

const appDir = path.resolve(import.meta.dirname, "../../app");

/** Every `app/api/**\/route.ts` as its path and the methods it exports, read from its source. */
function routeFiles(): Record<string, string[]> {
  const routes: Record<string, string[]> = {};
  for (const file of readdirSync(path.join(appDir, "api"), { recursive: true, encoding: "utf8" })) {
    if (path.basename(file) !== "route.ts") continue;
    const source = readFileSync(path.join(appDir, "api", file), "utf8");
    const methods = [...source.matchAll(/^export (?:async )?function (GET|HEAD|OPTIONS|POST|PUT|PATCH|DELETE)\b/gm)];
    routes[`/api/${path.dirname(file).split(path.sep).join("/")}`] = methods.map((match) => match[1]!).sort();
  }
  return routes;
}

describe("the table of API methods", () => {
  it("names every route file under app/api and exactly the methods each exports", () => {
    const table = Object.fromEntries(
      Object.entries(apiRouteMethods).map(([route, methods]) => [route, [...methods].sort()]),
    );
    expect(table).toEqual(routeFiles());
  });

  it("matches a route's parameters as any one segment, and adds HEAD where GET is", () => {
    expect(allowedMethods("/api/users/ada")).toEqual(["GET", "HEAD", "PATCH"]);
    expect(allowedMethods("/api/users/ada/primary")).toEqual(["POST"]);
    expect(allowedMethods("/api/lab/relay/2/users/%FF/primary")).toEqual(["POST"]);
    expect(allowedMethods("/api/users/ada/primary/extra")).toBeNull();
    expect(allowedMethods("/api/users//primary")).toBeNull();
  });
});

describe("guardProblem", () => {
  it("refuses a method a route does not take with 405 and Allow", () => {
    for (const method of ["TRACE", "OPTIONS", "PUT", "DELETE", "PATCH", "HEAD"]) {
      const problem = guardProblem(method, "/api/users/ada/primary?x=1", undefined);
      expect(problem?.status).toBe(405);
      expect(problem?.headers).toMatchObject({ Allow: "POST" });
    }
    expect(guardProblem("TRACE", "/api/session", undefined)?.headers).toMatchObject({
      Allow: "DELETE, GET, HEAD, POST",
    });
  });

  it("lets every method a route takes through, and everything outside /api/", () => {
    expect(guardProblem("HEAD", "/api/users", undefined)).toBeNull();
    expect(guardProblem("PATCH", "/api/users/ada", undefined)).toBeNull();
    expect(guardProblem("TRACE", "/learn", undefined)).toBeNull();
    expect(guardProblem("GET", "/apis", undefined)).toBeNull();
  });

  it("answers an API path no route has with 404, or 400 when it is malformed", () => {
    expect(guardProblem("TRACE", "/api/nowhere", undefined)?.status).toBe(404);
    expect(guardProblem("GET", "/api", undefined)?.status).toBe(404);
    expect(guardProblem("GET", "/api/users/ada/primary/extra", undefined)?.status).toBe(404);
    expect(guardProblem("GET", "/api/lab/%FF", undefined)?.toJSON()).toMatchObject({
      status: 400,
      errors: [{ field: "path" }],
    });
  });

  it("refuses a stated body over 64 KB with 413 before it is read; a chunked one is left to the route", () => {
    expect(guardProblem("PUT", "/api/lab", String(64 * 1024 + 1))?.status).toBe(413);
    expect(guardProblem("PUT", "/api/lab", String(64 * 1024))).toBeNull();
    expect(guardProblem("PUT", "/api/lab", undefined)).toBeNull();
  });
});
