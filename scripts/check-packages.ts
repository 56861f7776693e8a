/**
 * `npm run check:packages`: every package of this repository (the npm workspaces of package.json) packs to
 * exactly what its README lists, and loads by its name. For each workspace: `npm pack --dry-run` (which builds
 * it: prepack) must hold exactly the files named in backticks in the bullets of its README's section
 * "## What the package holds" (package.json and README.md included); every file its `exports` map names must
 * be among them; and `import("<name>")` from the repository's root must load (the exports map, the built
 * JavaScript's own imports). A new package joins by being listed in `workspaces` and having that section.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const heading = "## What the package holds";

interface Manifest {
  name: string;
  exports?: unknown;
}

/** The files `npm pack` puts in the tarball, as paths inside the package. */
function packedFiles(workspace: string): string[] {
  const output = execFileSync("npm", ["pack", "--dry-run", "--json", "--workspace", workspace], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const [packed] = JSON.parse(output) as { files: { path: string }[] }[];
  return packed!.files.map((file) => file.path).sort();
}

/** The files the README's section lists: every `path` in backticks on its bullet lines. */
function listedFiles(readme: string): string[] {
  const start = readme.indexOf(`\n${heading}\n`);
  if (start < 0) return [];
  const section = readme.slice(start + heading.length + 2).split(/\n## /)[0]!;
  const bullets = section.split("\n").filter((line) => /^\s*[-*] /.test(line));
  return [...new Set(bullets.flatMap((line) => [...line.matchAll(/`([^`\s]+\.[a-z.]+)`/g)].map((match) => match[1]!)))]
    .map((file) => file.replace(/^\.\//, ""))
    .sort();
}

/** Every file path an exports map points at. */
const exportTargets = (exports: unknown): string[] =>
  typeof exports === "string"
    ? [exports.replace(/^\.\//, "")]
    : exports && typeof exports === "object"
      ? Object.values(exports).flatMap(exportTargets)
      : [];

function problemsOf(workspace: string): string[] {
  const folder = path.join(root, workspace);
  const manifest = JSON.parse(readFileSync(path.join(folder, "package.json"), "utf8")) as Manifest;
  const packed = packedFiles(workspace);
  const listed = listedFiles(readFileSync(path.join(folder, "README.md"), "utf8"));
  const problems = [
    ...(listed.length === 0 ? [`its README has no "${heading}" section listing the files`] : []),
    ...packed.filter((file) => !listed.includes(file)).map((file) => `packs ${file}, which its README does not list`),
    ...listed
      .filter((file) => !packed.includes(file))
      .map((file) => `its README lists ${file}, which it does not pack`),
    ...exportTargets(manifest.exports)
      .filter((file) => !packed.includes(file))
      .map((file) => `its exports map names ${file}, which it does not pack`),
  ];
  try {
    execFileSync(process.execPath, ["--input-type=module", "-e", `await import(${JSON.stringify(manifest.name)})`], {
      cwd: root,
      stdio: ["ignore", "ignore", "pipe"],
    });
  } catch (error) {
    problems.push(`import("${manifest.name}") fails: ${String((error as { stderr?: Buffer }).stderr ?? error)}`);
  }
  return problems.map((problem) => `${manifest.name} (${workspace}): ${problem}`);
}

const { workspaces = [] } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as {
  workspaces?: string[];
};
const problems = workspaces.flatMap(problemsOf);
for (const problem of problems) console.error(problem);
console.log(
  `${workspaces.length} package(s) checked: ${problems.length === 0 ? "each packs what its README lists" : "FAILED"}`,
);
process.exitCode = problems.length === 0 ? 0 : 1;
