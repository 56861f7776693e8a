/**
 * The layers as the code's imports draw them: lib's folders import one way, lib imports nothing of Next.js,
 * and the product's switch route reaches the provider without the lab or msw (issue: a lean product path).
 * Process-wide state is kept in one way only: through `processSingleton`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { processSingletonPrefix } from "./core/process-singleton";

const root = path.resolve(import.meta.dirname, "..");

/** A specifier as a file of this repository, or null for a package's. */
function resolve(from: string, specifier: string): string | null {
  const local = specifier.startsWith("@/")
    ? path.join(root, specifier.slice(2))
    : specifier.startsWith(".")
      ? path.resolve(path.dirname(from), specifier)
      : (workspaceSource(specifier) ?? null);
  if (local === null) return null;
  const file = ["", ".ts", ".tsx", "/index.ts"]
    .map((ending) => local + ending)
    .find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
  if (!file) throw new Error(`${relative(from)} imports ${specifier}, which names no file here`);
  return file;
}

/** This repository's own packages, imported by name (tsconfig.json's paths): their source folders. */
const workspaceFolders: Record<string, string> = {
  "@lease-lock-lab/lease": "lib/lease",
  "@lease-lock-lab/race": "e2e/race",
};
function workspaceSource(specifier: string): string | undefined {
  const name = packageOf(specifier);
  const folder = workspaceFolders[name];
  if (!folder) return undefined;
  const subpath = specifier.slice(name.length);
  return path.join(root, folder, subpath === "" ? "index" : subpath);
}

const packageOf = (specifier: string) =>
  specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!;

/**
 * What a file imports: at load (static imports; type-only ones are erased) and on demand (`import()`), as
 * files of this repository and as packages.
 */
function importsOf(file: string) {
  const source = readFileSync(file, "utf8");
  const split = (specifiers: string[]) => ({
    files: specifiers.map((specifier) => resolve(file, specifier)).filter((each) => each !== null),
    packages: specifiers.filter((specifier) => resolve(file, specifier) === null).map(packageOf),
  });
  return {
    atLoad: split(
      [...source.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?["']([^"']+)["']/gm)].map(
        (match) => match[1]!,
      ),
    ),
    onDemand: split([...source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)].map((match) => match[1]!)),
  };
}

/** Every module `entry` loads with it, itself included, every package among them, and what they load on demand. */
function closureOf(entry: string) {
  const files = new Set<string>();
  const packages = new Set<string>();
  const onDemand: { by: string; file: string }[] = [];
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const imports = importsOf(file);
    imports.atLoad.packages.forEach((name) => packages.add(name));
    imports.onDemand.files.forEach((imported) => onDemand.push({ by: relative(file), file: relative(imported) }));
    imports.atLoad.files.forEach(visit);
  };
  visit(entry);
  return { files, packages, onDemand };
}

const sourcesUnder = (directory: string): string[] =>
  readdirSync(directory, { recursive: true, encoding: "utf8" })
    .filter((name) => /\.tsx?$/.test(name) && !/\.test\.ts$/.test(name) && !name.split(path.sep).includes("dist"))
    .map((name) => path.join(directory, name));

const relative = (file: string) => path.relative(root, file);

/**
 * Every code file of the repository, tests included: what git tracks or would track, so that build output,
 * packages and the lab's data stay out wherever .gitignore keeps them (bench/next-min/.next, lib/lease/dist, …).
 */
const repositoryCode = (): string[] =>
  execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], { cwd: root, encoding: "utf8" })
    .split("\0")
    .filter((name) => /\.[cm]?[jt]sx?$/.test(name))
    .map((name) => path.join(root, name))
    .filter((file) => existsSync(file) && statSync(file).isFile());

describe("the layers", () => {
  it.each([
    ["switch", "app/api/users/[userId]/primary/route.ts", "lib/switch/lease-guard.ts"],
    ["rename", "app/api/users/[userId]/route.ts", "lib/switch/rename.ts"],
  ])(
    "the %s route reaches the provider without the lab's code or msw; the lab is loaded only when it is on",
    (_, route, itsWork) => {
      const { files, packages, onDemand } = closureOf(path.join(root, route));
      expect([...files].map(relative).filter((file) => file.startsWith("lib/lab/"))).toEqual([]);
      expect([...packages].filter((name) => name === "msw")).toEqual([]);
      // The walk does follow the path: the product's switch, the route's own work and the lease are on it.
      expect([...files].map(relative)).toEqual(
        expect.arrayContaining(["lib/switch/service.ts", itsWork, "lib/lease/with-lease.ts"]),
      );
      // One door to the lab: the composition root's, taken only with LAB_ENABLED.
      expect(onDemand.filter(({ file }) => file.startsWith("lib/lab/"))).toEqual([
        { by: "lib/web/switch.ts", file: "lib/lab/switch-layer.ts" },
      ]);
      expect(readFileSync(path.join(root, "lib/web/switch.ts"), "utf8")).toMatch(
        /config\.labEnabled \? \(await import\("\.\.\/lab\/switch-layer"\)\)/,
      );
    },
  );

  it("no two folders of lib/ import each other, and lib/ imports nothing of Next.js", () => {
    const folderOf = (file: string) => relative(file).split(path.sep)[1]!;
    const edges = new Set<string>();
    const nextImports: string[] = [];
    for (const file of sourcesUnder(path.join(root, "lib"))) {
      const { atLoad, onDemand } = importsOf(file);
      if ([...atLoad.packages, ...onDemand.packages].includes("next")) nextImports.push(relative(file));
      for (const imported of [...atLoad.files, ...onDemand.files])
        if (relative(imported).startsWith("lib/") && folderOf(imported) !== folderOf(file))
          edges.add(`${folderOf(file)} → ${folderOf(imported)}`);
    }
    const twoWay = [...edges].filter((edge) => edges.has(edge.split(" → ").reverse().join(" → ")));
    expect(twoWay).toEqual([]);
    expect(nextImports).toEqual([]);
    expect(edges.size).toBeGreaterThan(5);
  });

  it("a newcomer follows one product switch through at most 12 files of its own", () => {
    const { files } = closureOf(path.join(root, "app/api/users/[userId]/primary/route.ts"));
    // The route, the composition root and the switch's folder: the libraries it uses (the lease, the provider's
    // client, the web helpers) are read on their own. The layer's other doors come with the root but are not
    // on a switch's way: the rename (and the view it answers), and the background reconciler.
    const otherDoors = ["lib/switch/rename.ts", "lib/switch/user-view.ts", "lib/switch/reconciler.ts"];
    const switchFiles = [...files]
      .map(relative)
      .filter((file) => file.startsWith("app/") || file.startsWith("lib/switch/") || file === "lib/web/switch.ts")
      .filter((file) => !otherDoors.includes(file));
    expect(switchFiles.length, switchFiles.join(", ")).toBeLessThanOrEqual(12);
  });

  it("the product's switch and the lease library name no lab concept: the lab wraps them from outside", () => {
    // The lab's words: its own name, its strategies and timeline, its faults (a stall point, not a renewal
    // that stalled) and the wrong answers it teaches. PostgreSQL's timeline ID is the database's word.
    const labWords =
      /\blab\b|\blab's|LAB_ENABLED|textbook|safeguard|teaching|\bfaults?\b|\bhooks?\b|\bstalls?\b|unfenced|mapped|experiment|\blanes?\b|timeline(?! ID)|strateg/i;
    const named = [...sourcesUnder(path.join(root, "lib/switch")), ...sourcesUnder(path.join(root, "lib/lease"))]
      .flatMap((file) =>
        readFileSync(file, "utf8")
          .split("\n")
          .map((line, index) => ({ line, at: `${relative(file)}:${index + 1}` })),
      )
      // The packages' scope is the project's name, not a lab concept.
      .filter(({ line }) => labWords.test(line.replaceAll("@lease-lock-lab/", "")))
      .map(({ at, line }) => `${at}: ${line.trim()}`);
    expect(named).toEqual([]);
  });

  it("outside its folder, a package of this repository is imported by its name, never as a relative folder", () => {
    // A relative import of the folder resolves through its package.json to dist/ once a pack has built it, and
    // the app would then type-check against two copies of the same types (a file of the folder is its source).
    const byPath = repositoryCode()
      .filter((file) => /\.tsx?$/.test(file))
      .flatMap((file) =>
        [...readFileSync(file, "utf8").matchAll(/^\s*(?:import|export)\b[^'";]*?\sfrom\s+["'](\.[^"']*)["']/gm)]
          .map((match) => ({ file, specifier: match[1]! }))
          .filter(({ specifier }) => {
            const into = relative(path.resolve(path.dirname(file), specifier));
            return Object.values(workspaceFolders).some(
              (folder) => into === folder && !relative(file).startsWith(`${folder}/`),
            );
          }),
      )
      .map(({ file, specifier }) => `${relative(file)} imports ${specifier}`);
    expect(byPath).toEqual([]);
  });

  it("no file but processSingleton's own keeps state on globalThis under the lab's names", () => {
    const touching = repositoryCode().filter((file) => readFileSync(file, "utf8").includes(processSingletonPrefix));
    expect(touching.map(relative)).toEqual(["lib/core/process-singleton.ts"]);
  });
});
