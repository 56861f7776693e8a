/**
 * The documents: every relative link and picture resolves (a file, and a heading when it names one), the front
 * door stays short, and the worked example in e2e/races/README.md is the spec that runs.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");
const skipped = new Set(["node_modules", ".git", ".lab", "test-results", "playwright-report"]);

function markdownFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    if (skipped.has(name) || name.startsWith(".next")) return [];
    const file = path.join(directory, name);
    if (statSync(file).isDirectory()) return markdownFiles(file);
    return name.endsWith(".md") ? [file] : [];
  });
}

/** The text outside code blocks and code spans, where links are links. */
const prose = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");

/** A heading's anchor, as GitHub makes it. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");

const anchorsOf = (file: string) =>
  new Set(
    [
      ...readFileSync(file, "utf8")
        .replace(/^```[\s\S]*?^```/gm, "")
        .matchAll(/^#{1,6} (.+)$/gm),
    ].map((match) => anchorOf(match[1]!)),
  );

const documents = markdownFiles(root);

describe("the documents", () => {
  it.each(documents.map((file) => path.relative(root, file)))("%s: every relative link resolves", (name) => {
    const file = path.join(root, name);
    const broken = [...prose(readFileSync(file, "utf8")).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)]
      .map((match) => match[1]!)
      .filter((target) => !/^[a-z]+:/.test(target))
      .filter((target) => {
        const [linked, anchor] = target.split("#");
        const resolved = linked ? path.resolve(path.dirname(file), decodeURIComponent(linked)) : file;
        if (!existsSync(resolved)) return true;
        return anchor !== undefined && !anchorsOf(resolved).has(anchor);
      });
    expect(broken).toEqual([]);
  });

  it("the front door, README.md, is at most 200 lines", () => {
    expect(readFileSync(path.join(root, "README.md"), "utf8").trimEnd().split("\n").length).toBeLessThanOrEqual(200);
  });

  it("the worked example in e2e/races/README.md is own-app-example.spec.ts, which runs in the suite", () => {
    const readme = readFileSync(path.join(root, "e2e/races/README.md"), "utf8");
    const example = /```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    const spec = readFileSync(path.join(root, "e2e/races/own-app-example.spec.ts"), "utf8");
    expect(spec.slice(spec.indexOf("\n") + 1)).toBe(example);
  });
});
