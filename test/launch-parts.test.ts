import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");

it("asking for a part that is not installed prints the one command that installs it, and exits 1 without a stack trace", async () => {
  // An empty PATH: redis-server (in /usr/bin) cannot be found.
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/launch.ts", "start", "--redis"], {
    cwd: root,
    env: { ...process.env, PATH: "/nonexistent" },
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise((resolve) => child.once("exit", resolve));
  expect(code).toBe(1);
  expect(output.trim()).toBe(
    `[launch] redis-server is not installed. Install it with: ${process.getuid?.() === 0 ? "" : "sudo "}apt-get install -y redis-server`,
  );
});

// `npm test`'s first step, on a machine without some parts: a PATH of a folder of its own, where a stand-in
// apt-get puts an executable named after each package it installs (pgbouncer and haproxy, in /usr/sbin, are
// found there as on any Debian machine; Playwright's own Chromium is kept out of sight).
describe("npm test's system parts", () => {
  const folder = mkdtempSync(path.join(tmpdir(), "system-parts-"));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  const standInAptGet = `#!/bin/sh
echo "$*" >> "\${0%/*}/apt-get.log"
[ "$1" = install ] || exit 0
for package in "$@"; do
  case $package in -*|install) ;; *) printf '#!/bin/sh\\n' > "\${0%/*}/$package"; /bin/chmod +x "\${0%/*}/$package" ;; esac
done
`;
  const sbin = (program: string) => ["/usr/sbin", "/usr/local/sbin"].some((dir) => existsSync(path.join(dir, program)));
  const missing = ["chromium", "pgbouncer", "redis-server", "haproxy"].filter((program) => !sbin(program));
  const isRoot = process.getuid?.() === 0;

  async function systemParts(pathFolder: string) {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/system-parts.ts"], {
      cwd: root,
      env: { ...process.env, PATH: pathFolder, PLAYWRIGHT_BROWSERS_PATH: path.join(folder, "no-browsers") },
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise((resolve) => child.once("exit", resolve));
    return { code, output: output.trim() };
  }

  it("without apt-get, stops at once with the one command that installs what is missing", async () => {
    mkdirSync(path.join(folder, "empty"));
    expect(await systemParts(path.join(folder, "empty"))).toEqual({
      code: 1,
      output:
        `npm test needs ${missing.join(", ")}, not installed here. ` +
        `Install ${missing.length > 1 ? "them" : "it"} with: ${isRoot ? "" : "sudo "}apt-get install -y ${missing.join(" ")}`,
    });
  });

  it("as root with apt-get, installs exactly what is missing and goes on (else stops with sudo's command)", async () => {
    const withAptGet = path.join(folder, "with-apt-get");
    mkdirSync(withAptGet);
    writeFileSync(path.join(withAptGet, "apt-get"), standInAptGet, { mode: 0o755 });
    const { code, output } = await systemParts(withAptGet);
    if (!isRoot) {
      expect({ code, output }).toMatchObject({ code: 1, output: expect.stringContaining("sudo apt-get install -y") });
      return;
    }
    expect({ code, output }).toEqual({
      code: 0,
      output: [
        `[system parts] installing ${missing.join(", ")} with apt-get`,
        "[system parts] installed: chromium, pgbouncer, redis-server, haproxy",
      ].join("\n"),
    });
    expect(readFileSync(path.join(withAptGet, "apt-get.log"), "utf8")).toBe(
      `update -qq\ninstall -y -qq ${missing.join(" ")}\n`,
    );
  });
});
