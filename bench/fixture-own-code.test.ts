import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { assertRunsOnlyItsOwnCode } from "./fixture-own-code";

const made: string[] = [];
afterEach(() => {
  for (const directory of made.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/**
 * A fixture's build as Turbopack leaves it, reduced to what the check reads: the start-up's trace, its chunk's
 * source map (sources relative to the chunk), and the two manifests that register a proxy.
 */
function builtFixture(startUpSources: string[], proxy = false): string {
  const repository = mkdtempSync(path.join(os.tmpdir(), "fixture-own-code-"));
  made.push(repository);
  const directory = path.join(repository, "bench", "next-min");
  const server = path.join(directory, ".next", "server");
  mkdirSync(path.join(server, "chunks"), { recursive: true });
  const json = (file: string, value: unknown) => writeFileSync(path.join(server, file), JSON.stringify(value));
  json("instrumentation.js.nft.json", { files: ["chunks/[turbopack]_runtime.js", "chunks/start-up.js"] });
  json("chunks/start-up.js.map", { version: 3, sections: [{ offset: {}, map: { sources: startUpSources } }] });
  const registered = { "/_middleware": { runtime: "nodejs" } };
  json("functions-config-manifest.json", { version: 1, functions: proxy ? registered : {} });
  json("middleware-manifest.json", { version: 3, middleware: {}, functions: {} });
  return directory;
}

// Seen from .next/server/chunks of bench/next-min: five levels up is the repository.
const own = "../../../../../bench/next-min/instrumentation.ts";
const product = "../../../../../instrumentation.ts";
const aPackage = "../../../../../node_modules/next/dist/server/lib/trace/tracer.js";

describe("a fixture runs only its own code", () => {
  it("passes a build whose start-up is the fixture's own, with packages", () => {
    expect(() => assertRunsOnlyItsOwnCode(builtFixture([own, aPackage]))).not.toThrow();
  });

  it("refuses a build that runs the repository's instrumentation, naming it", () => {
    const directory = builtFixture([product, "../../../../../lib/web/tracing.ts"]);
    expect(() => assertRunsOnlyItsOwnCode(directory)).toThrow(/runs 2 files that are not its own at start/);
    expect(() => assertRunsOnlyItsOwnCode(directory)).toThrow(
      path.resolve(directory, "..", "..", "instrumentation.ts"),
    );
  });

  it("refuses a build that registers a proxy", () => {
    expect(() => assertRunsOnlyItsOwnCode(builtFixture([own], true))).toThrow(/runs a proxy before its routes/);
  });
});
