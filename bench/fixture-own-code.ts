/**
 * A fixture app (`next-min`, `next-bare`) is a floor only if none of the product's code runs in it. Turbopack,
 * whose root is the repository (the fixtures build from its packages), builds the repository's own
 * instrumentation.ts into a fixture that has none by that name: until this check, both fixtures ran the product's
 * start-up (the lab's tracing, the request guard, the reconciler and the lab's listeners), and a profile of
 * next-bare's page read + switch at K = 1 (one each way) put 0.6 ms of OpenTelemetry and 1.2 ms more collection on
 * it. So each fixture has an `instrumentation.ts` of its own, empty, and this refuses a build that would run
 * anything else at start or before a route (a proxy, which Turbopack builds from the repository's proxy.ts but does
 * not register while the fixture has none).
 */
import { readFileSync } from "node:fs";
import path from "node:path";

interface SourceMapFile {
  sources?: string[];
  sections?: { map: { sources: string[] } }[];
}

const readJson = <T>(file: string) => JSON.parse(readFileSync(file, "utf8")) as T;

/** The sources of the code a built server runs from `entry` (a `.next/server/*.js`), by its trace and maps. */
function sourcesOf(server: string, entry: string): string[] {
  const { files } = readJson<{ files: string[] }>(path.join(server, `${entry}.nft.json`));
  return files
    .filter((file) => file.startsWith("chunks/") && !file.includes("[turbopack]_runtime"))
    .flatMap((file) => {
      const map = readJson<SourceMapFile>(path.join(server, `${file}.map`));
      const sources = map.sections?.flatMap((section) => section.map.sources) ?? map.sources ?? [];
      return sources.map((source) => path.resolve(path.dirname(path.join(server, file)), decodeURI(source)));
    });
}

/** Throws unless the fixture built in `directory` runs only its own start-up and no proxy. */
export function assertRunsOnlyItsOwnCode(directory: string): void {
  const server = path.join(directory, ".next", "server");
  const foreign = new Set(
    sourcesOf(server, "instrumentation.js").filter(
      (source) => !source.startsWith(directory + path.sep) && !source.includes(`${path.sep}node_modules${path.sep}`),
    ),
  );
  if (foreign.size > 0)
    throw new Error(
      `${path.basename(directory)} runs ${foreign.size} files that are not its own at start ` +
        `(${[...foreign].slice(0, 3).join(", ")}, …): it needs an instrumentation.ts of its own`,
    );
  const { functions } = readJson<{ functions: object }>(path.join(server, "functions-config-manifest.json"));
  const { middleware } = readJson<{ middleware: object }>(path.join(server, "middleware-manifest.json"));
  if (Object.keys(functions).length > 0 || Object.keys(middleware).length > 0)
    throw new Error(`${path.basename(directory)} runs a proxy before its routes: a floor must not`);
}
